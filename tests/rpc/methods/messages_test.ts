/** Golden tests of the message methods through dispatch, with a fake renderer as transport. */
import assert from "node:assert/strict";
import type { OutgoingRenderer } from "../../../src/core/send/outgoing.ts";
import type { MessageRecord } from "../../../src/store/mod.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import { fakeSend } from "../../core/_messaging.ts";
import { BOB_FPR, call, result, rpcError, seeded } from "./_messaging.ts";

/** A renderer that records read receipts. */
function fakeOutgoing(): OutgoingRenderer & { receipts: MessageRecord[][] } {
  const receipts: MessageRecord[][] = [];
  return {
    chat: fakeSend(),
    oweReadReceipts: (m) => void receipts.push([...m]),
    renderControl: () => Promise.reject(new Error("no controls in this test")),
    receipts,
  };
}

Deno.test("send_msg sends text and files; the caller's file stays where it was", async () => {
  await withTempDir(async (dir) => {
    const s = seeded(dir, fakeOutgoing());
    try {
      const textId = await result(s, "send_msg", [1, s.chatId, { text: "hi" }]);
      assert.equal(textId, 10);
      await Deno.mkdir(`${dir}/files`);
      const src = `${dir}/files/report.txt.prv`;
      await Deno.writeTextFile(src, "encrypted bytes");
      const fileId = await result(s, "send_msg", [1, s.chatId, { file: src, text: "see file" }]);
      assert.equal(s.wakes.count, 2, "the sender is woken once per queued message");
      assert.deepEqual(s.store.outbox.due(Date.now() + 1000).map((r) => r.msgId), [
        textId,
        fileId,
      ]);
      assert.equal(await Deno.readTextFile(src), "encrypted bytes");
      const m = await result(s, "get_message", [1, fileId]) as Record<string, unknown>;
      assert.match(String(m.file), new RegExp(`^${dir}/accounts/1/blobs/[0-9a-f]{32}\\.prv$`));
      assert.equal(m.fileBytes, 15);
      assert.equal(m.fileName, "report.txt.prv");
      assert.equal(m.viewtype, "File");
      assert.equal(m.viewType, "File");
      assert.equal(m.state, 10);
      assert.equal(m.fromId, 1);
      assert.equal(m.text, "see file");
      assert.equal((m.sender as Record<string, unknown>).displayName, "Me");
      assert.deepEqual(await result(s, "get_message_ids", [1, s.chatId, false, false]), [
        textId,
        fileId,
      ]);
    } finally {
      s.store.close();
    }
  });
});

Deno.test("send_msg says clearly what is wrong with MessageData or the file", async () => {
  await withTempDir(async (dir) => {
    const s = seeded(dir, fakeOutgoing());
    try {
      const err = (data: unknown, chat = s.chatId) => rpcError(s, "send_msg", [1, chat, data]);
      assert.deepEqual(await err({ file: `${dir}/files/missing.prv` }), {
        code: -1,
        message: `send_msg: the files directory ${dir}/files does not exist; create it and put ` +
          "the files to be sent there",
      });
      await Deno.mkdir(`${dir}/files/sub`, { recursive: true });
      const only = `only regular files inside the files directory ${dir}/files, or files of ` +
        "stored messages, may be sent";
      assert.deepEqual(await err({ file: `${dir}/files/missing.prv` }), {
        code: -1,
        message: `send_msg: "${dir}/files/missing.prv" does not exist (${only})`,
      });
      assert.deepEqual(await err({ file: `${dir}/files/sub` }), {
        code: -1,
        message: `send_msg: "${dir}/files/sub" is a directory (${only})`,
      });
      assert.deepEqual(await err({ file: "relative.txt" }), {
        code: -1,
        message: `send_msg: "relative.txt" is not an absolute path; give the absolute path of a ` +
          `file inside the files directory ${dir}/files`,
      });
      // Field types and the viewtype names are the declaration's schema: the message names the
      // parameter's position and name, the field, what it must be and what came.
      const param = "parameter 3 (message_data) of send_msg: field";
      assert.deepEqual(await err({ text: "x", viewtype: "Bogus" }), {
        code: -32602,
        message: `${param} "viewtype" must be one of "Text", "Image", "Gif", "Sticker", "Audio", ` +
          '"Voice", "Video", "File", "Webxdc", "Vcard" or null, got "Bogus"',
      });
      assert.deepEqual(await err({ text: 5 }), {
        code: -32602,
        message: `${param} "text" must be a string or null, got number`,
      });
      assert.equal((await err({})).code, -32602);
      assert.equal((await err({ text: "x", viewtype: "File" })).code, -32602);
      assert.deepEqual(await err({ text: "x", html: "<b>x</b>" }), {
        code: -32602,
        message: "MessageData.html is not supported by this gateway",
      });
      assert.equal((await err("text")).code, -32602);
      assert.deepEqual(await err({ text: "x", quotedMessageId: "5" }), {
        code: -32602,
        message: `${param} "quotedMessageId" must be an unsigned 32-bit integer (u32) or null, ` +
          "got string",
      });
      assert.deepEqual(await err({ text: "x", quotedMessageId: 77 }), {
        code: -1,
        message: "cannot quote message 77: message not found",
      });
      assert.deepEqual(await err({ text: "x" }, 99), { code: -1, message: "chat 99 not found" });
      assert.equal(s.store.countMessages(), 0);
    } finally {
      s.store.close();
    }
  });
});

Deno.test("send_msg refuses every file outside the files directory and stores nothing", async () => {
  await withTempDir(async (dir) => {
    const s = seeded(dir, fakeOutgoing());
    const files = `${dir}/files`;
    const outside = `${dir}-outside.txt`;
    try {
      await Deno.mkdir(files);
      await Deno.mkdir(`${dir}/accounts/1/blobs`, { recursive: true });
      await Deno.writeTextFile(`${dir}/accounts/1/gateway.db`, "keys and messages");
      await Deno.writeTextFile(outside, "secret");
      await Deno.symlink(outside, `${files}/out.txt`);
      await Deno.symlink("/etc", `${files}/etc`);
      await Deno.symlink(`${dir}/accounts/1/gateway.db`, `${files}/db`);
      await Deno.symlink("/etc/machine-id", `${files}/id`);
      await Deno.link(outside, `${files}/hard.txt`);
      const fifo = await new Deno.Command("mkfifo", { args: [`${files}/pipe`] }).output();
      assert.equal(fifo.code, 0);
      const cases: [string, RegExp][] = [
        [`${files}/out.txt`, /leads outside the files directory/],
        [`${files}/etc/passwd`, /leads outside the files directory/],
        [`${files}/etc/shadow`, /leads outside the files directory/],
        [`${files}/db`, /leads to the gateway's own state in its data directory/],
        [`${dir}/accounts/1/gateway.db`, /is the gateway's own state in its data directory/],
        [`${files}/../accounts/1/gateway.db`, /is the gateway's own state/],
        [`${files}/%2e%2e/accounts/1/gateway.db`, /does not exist/],
        [`${files}/id`, /leads to the device identity \/etc\/machine-id and is never sent/],
        ["/etc/machine-id", /is the device identity/],
        [`${files}/hard.txt`, /has 2 hard links/],
        [`${files}/pipe`, /is a FIFO \(named pipe\), not a regular file/],
        [outside, /is not inside the files directory/],
      ];
      for (const [file, expected] of cases) {
        const e = await rpcError(s, "send_msg", [1, s.chatId, { file, text: "x" }]);
        assert.equal(e.code, -1, file);
        assert.match(e.message, /^send_msg: "/, file);
        assert.match(e.message, expected, file);
        assert.ok(e.message.includes(files), `${file}: the message names the files directory`);
      }
      assert.equal(s.store.countMessages(), 0, "no message row");
      assert.equal(s.store.outbox.count(), 0, "no outbox row");
      assert.equal(s.wakes.count, 0, "the sender is not woken");
      assert.deepEqual([...Deno.readDirSync(`${dir}/accounts/1/blobs`)], [], "no blob copied");
    } finally {
      s.store.close();
      await Deno.remove(outside);
    }
  });
});

Deno.test("send_msg forwards a stored message's own file (a blob) under its given name", async () => {
  await withTempDir(async (dir) => {
    const s = seeded(dir, fakeOutgoing());
    try {
      await Deno.mkdir(`${dir}/files`);
      await Deno.writeTextFile(`${dir}/files/a.txt`, "forward me");
      const first = await result(s, "send_msg", [1, s.chatId, { file: `${dir}/files/a.txt` }]);
      const blob = String((await result(s, "get_message", [1, first]) as { file: string }).file);
      const again = await result(s, "send_msg", [1, s.chatId, { file: blob, filename: "b.txt" }]);
      const m = await result(s, "get_message", [1, again]) as Record<string, unknown>;
      assert.deepEqual([m.file, m.fileName, m.fileBytes], [blob, "b.txt", 10]);
    } finally {
      s.store.close();
    }
  });
});

Deno.test("get_messages maps ids to message objects or loadingError entries", async () => {
  const s = seeded();
  try {
    const { msgId } = s.core.messages.storeIncoming({
      rfc724Mid: "in1@relay.test",
      chatId: s.chatId,
      fromId: s.bob,
      text: "hello",
      subject: "Message from Bob",
      timestampSent: 1_700_000_100,
      timestampRcvd: 1_700_000_105,
      fromFingerprint: BOB_FPR,
    });
    const got = await result(s, "get_messages", [1, [msgId, 99]]) as Record<string, unknown>;
    const sender = (got[String(msgId)] as Record<string, unknown>).sender;
    assert.deepEqual(got, {
      [String(msgId)]: {
        kind: "message",
        id: msgId,
        chatId: s.chatId,
        fromId: s.bob,
        text: "hello",
        timestamp: 1_700_000_100,
        sortTimestamp: 1_700_000_100,
        receivedTimestamp: 1_700_000_105,
        hasDeviatingTimestamp: false,
        state: 1,
        file: null,
        fileBytes: 0,
        fileName: null,
        fileMime: null,
        viewtype: "Text",
        viewType: "Text",
        sender,
        subject: "Message from Bob",
        error: null,
        quote: null,
        parentId: null,
        isInfo: false,
        isEdited: false,
        isForwarded: false,
        isBot: false,
        isPinned: false,
        showPadlock: true,
        hasHtml: false,
        hasLocation: false,
        systemMessageType: "Unknown",
        infoContactId: null,
        overrideSenderName: null,
        duration: 0,
        dimensionsWidth: 0,
        dimensionsHeight: 0,
        downloadState: "Done",
        webxdcHref: null,
        originalMsgId: null,
        savedMessageId: null,
        reactions: null,
        vcardContact: null,
      },
      "99": { kind: "loadingError", error: "message 99 not found" },
    });
    assert.deepEqual(sender, await result(s, "get_contact", [1, s.bob]));
    assert.deepEqual(await rpcError(s, "get_message", [1, 99]), {
      code: -1,
      message: "message 99 not found",
    });
  } finally {
    s.store.close();
  }
});

Deno.test("markseen_msgs (204) marks fresh messages seen and sends the receipts asked for", async () => {
  const outgoing = fakeOutgoing();
  const s = seeded(undefined, outgoing);
  try {
    const messages = s.core.messages;
    const incoming = (mid: string, mdnRequested: boolean) =>
      messages.storeIncoming({
        rfc724Mid: mid,
        chatId: s.chatId,
        fromId: s.bob,
        text: mid,
        timestampSent: 1_700_000_100,
        mdnRequested,
      }).msgId;
    const a = incoming("a@x", true);
    const b = incoming("b@x", false);
    assert.deepEqual(await result(s, "get_fresh_msgs", [1]), [b, a]);
    const sub = s.bus.subscribe();
    assert.deepEqual(await call(s, "markseen_msgs", [1, [a, b]]), { status: 204 });
    assert.deepEqual(outgoing.receipts.map((batch) => batch.map((m) => m.id)), [[a]]);
    assert.deepEqual((await sub.next()).map((e) => e.event), [
      { type: "MsgsNoticed", account_id: 1, chat_id: s.chatId },
    ]);
    sub.close();
    assert.deepEqual(await result(s, "get_fresh_msgs", [1]), []);
    const seen = await result(s, "get_messages", [1, [a]]) as Record<string, { state: number }>;
    assert.equal(seen[String(a)].state, 16);
    const items = await result(s, "get_chatlist_items_by_entries", [1, [s.chatId]]);
    const item = (items as Record<string, { freshMessageCounter: number }>)[String(s.chatId)];
    assert.equal(item.freshMessageCounter, 0);
  } finally {
    s.store.close();
  }
});

Deno.test("delete_messages (204) removes messages; get_message_ids adds day markers", async () => {
  const s = seeded();
  try {
    const messages = s.core.messages;
    const at = (mid: string, t: number) =>
      messages.storeIncoming({
        rfc724Mid: mid,
        chatId: s.chatId,
        fromId: s.bob,
        text: mid,
        timestampSent: t,
        timestampRcvd: t,
      }).msgId;
    const a = at("a@x", 1_700_000_000);
    const b = at("b@x", 1_700_100_000);
    assert.deepEqual(await result(s, "get_message_ids", [1, s.chatId, false, true]), [9, a, 9, b]);
    assert.deepEqual(await call(s, "delete_messages", [1, [a]]), { status: 204 });
    assert.deepEqual(await result(s, "get_message_ids", [1, s.chatId, false, false]), [b]);
    assert.deepEqual(await rpcError(s, "delete_messages", [1, [a]]), {
      code: -1,
      message: `message ${a} not found`,
    });
  } finally {
    s.store.close();
  }
});

Deno.test("markseen_msgs changes nothing when the read receipts cannot be owed (one transaction)", async () => {
  const outgoing: OutgoingRenderer = {
    chat: fakeSend(),
    oweReadReceipts: () => {
      throw new Error("disk full");
    },
    renderControl: () => Promise.reject(new Error("no controls in this test")),
  };
  const s = seeded(undefined, outgoing);
  try {
    const id = s.core.messages.storeIncoming({
      rfc724Mid: "asks@x",
      chatId: s.chatId,
      fromId: s.bob,
      text: "read me",
      timestampSent: 1_700_000_100,
      mdnRequested: true,
    }).msgId;
    const sub = s.bus.subscribe();
    const answer = await call(s, "markseen_msgs", [1, [id]]);
    assert.equal((answer as { body: { error: { code: number } } }).body.error.code, -32603);
    assert.deepEqual(await result(s, "get_fresh_msgs", [1]), [id], "still fresh");
    const noticed = await Promise.race([sub.next(), new Promise((r) => setTimeout(r, 20, "none"))]);
    assert.equal(noticed, "none", "no MsgsNoticed for a rolled-back change");
    sub.close();
  } finally {
    s.store.close();
  }
});

Deno.test("get_message_reactions and the message object give reactions, edits and quotes", async () => {
  const s = seeded();
  try {
    const messages = s.core.messages;
    const id = messages.storeIncoming({
      rfc724Mid: "q@x",
      chatId: s.chatId,
      fromId: s.bob,
      text: "answer",
      quote: "question",
      timestampSent: 1_700_000_100,
    }).msgId;
    assert.equal(await result(s, "get_message_reactions", [1, id]), null);
    s.store.reactions.set(id, s.bob, "👍", 1_700_000_200);
    s.store.reactions.set(id, 1, "👍", 1_700_000_300);
    s.store.msgs.editText(id, "answer, edited");
    assert.deepEqual(await result(s, "get_message_reactions", [1, id]), {
      reactionsByContact: { [String(s.bob)]: ["👍"], "1": ["👍"] },
      reactions: [{ emoji: "👍", count: 2, isFromSelf: true }],
    });
    const m = await result(s, "get_message", [1, id]) as Record<string, unknown>;
    assert.equal(m.text, "answer, edited");
    assert.equal(m.isEdited, true);
    assert.deepEqual(m.quote, { kind: "JustText", text: "question" });
    assert.deepEqual((m.reactions as { reactions: unknown[] }).reactions.length, 1);
    assert.equal((await rpcError(s, "get_message_reactions", [1, 999])).code, -1);
    // A reply to a stored message quotes it WithMessage, as Delta Chat does.
    const reply = messages.storeIncoming({
      rfc724Mid: "r@x",
      chatId: s.chatId,
      fromId: s.bob,
      text: "and more",
      quote: "answer, edited",
      inReplyTo: "q@x",
      timestampSent: 1_700_000_400,
    }).msgId;
    const r = await result(s, "get_message", [1, reply]) as { quote: Record<string, unknown> };
    assert.deepEqual(
      [r.quote.kind, r.quote.messageId, r.quote.chatId, r.quote.authorDisplayName, r.quote.image],
      ["WithMessage", id, s.chatId, "Bob", null],
    );
    assert.match(String(r.quote.authorDisplayColor), /^#[0-9a-f]{6}$/);
  } finally {
    s.store.close();
  }
});
