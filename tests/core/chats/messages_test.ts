/** Tests of sending, deleting and listing messages in the messages domain. */
import assert from "node:assert/strict";
import { Chats } from "../../../src/core/chats/chats.ts";
import { Contacts } from "../../../src/core/contacts/contacts.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { Messages, type RenderFn, type SendSteps } from "../../../src/core/chats/messages.ts";
import { Store } from "../../../src/store/mod.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import { addPeer, attach, type Bench, bench, fakeSend, NOW_S } from "../_messaging.ts";

function withChat(b: Bench): { chatId: number; bob: number } {
  const bob = addPeer(b, "bob@relay.test", "b", "Bob");
  const chatId = new Chats(b.ctx).getOrCreate1to1(bob).chatId;
  b.sink.take();
  return { chatId, bob };
}

Deno.test("createOutgoing() writes message and outbox row, then emits MsgsChanged after commit", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/gateway.db`;
    const b = bench(`${dir}/blobs`, path);
    const reader = Store.open(path);
    const { chatId, bob } = withChat(b);
    const committed: (number | undefined)[] = [];
    b.sink.onPublish = (e) =>
      committed.push(
        "msgId" in e && e.msgId !== null ? reader.msgs.get(e.msgId)?.state : -1,
      );
    const calls: Parameters<RenderFn>[] = [];
    const render = fakeSend(calls);
    const id = await new Messages(b.ctx).createOutgoing({ chatId, text: "hi" }, render);
    assert.deepEqual(b.sink.take(), [{ kind: "MsgsChanged", chatId, msgId: id }]);
    assert.deepEqual(committed, [10], "a second connection sees the row when the event arrives");
    const [draft, chat, recipients] = calls[0];
    assert.deepEqual(draft, {
      chatId,
      text: "hi",
      viewtype: "Text",
      timestamp: NOW_S,
      file: undefined,
      inReplyTo: "",
      quote: "",
    });
    assert.equal(chat.id, chatId);
    assert.deepEqual(recipients.map((r) => r.id), [bob]);
    const m = b.store.msgs.get(id)!;
    assert.equal(m.state, 10);
    assert.equal(m.fromId, 1);
    assert.equal(m.rfc724Mid, "out1@relay.test");
    assert.equal(m.subject, "Message from Gateway");
    const [row] = b.store.outbox.due(Date.now());
    assert.equal(row.msgId, id);
    assert.deepEqual(row.recipients, ["bob@relay.test"]);
    await new Messages(b.ctx).createOutgoing({ chatId, text: "again" }, render);
    assert.equal(calls[1][0].inReplyTo, "out1@relay.test", "replies to the chat's newest message");
    reader.close();
    b.store.close();
  });
});

Deno.test("createOutgoing() with a throwing renderer leaves no rows, no events, no blob", async () => {
  await withTempDir(async (dir) => {
    const b = bench(`${dir}/blobs`);
    const { chatId } = withChat(b);
    const src = `${dir}/doc.txt`;
    await Deno.writeTextFile(src, "keep me");
    await using file = await attach(src);
    const failing = {
      admit: () => Promise.resolve(),
      render: () => Promise.reject(new Error("encryption failed")),
    };
    await assert.rejects(
      new Messages(b.ctx).createOutgoing({ chatId, file: { source: file } }, failing),
      /encryption failed/,
    );
    assert.equal(b.store.countMessages(), 0);
    assert.equal(b.store.outbox.count(), 0);
    assert.deepEqual(b.sink.events, []);
    assert.deepEqual([...Deno.readDirSync(`${dir}/blobs`)], [], "the copied blob is removed");
    assert.equal(await Deno.readTextFile(src), "keep me");
    b.store.close();
  });
});

Deno.test("createOutgoing() rolls back the message when the outbox insert fails", async () => {
  const b = bench();
  const { chatId } = withChat(b);
  const messages = new Messages(b.ctx);
  await messages.createOutgoing({ chatId, text: "one" }, fakeSend());
  b.sink.take();
  // A second fake renderer starts counting again: the same Message-ID violates the unique index.
  await assert.rejects(messages.createOutgoing({ chatId, text: "two" }, fakeSend()), /UNIQUE/);
  assert.equal(b.store.countMessages(), 1);
  assert.equal(b.store.outbox.count(), 1);
  assert.deepEqual(b.sink.events, []);
  b.store.close();
});

Deno.test("createOutgoing() sends a copy of the file and keeps its original name", async () => {
  await withTempDir(async (dir) => {
    const b = bench(`${dir}/blobs`);
    const { chatId } = withChat(b);
    const src = `${dir}/secret.pdf.prv`;
    await Deno.writeFile(src, new Uint8Array([1, 2, 3, 4, 5, 6, 7]));
    await using file = await attach(src);
    const messages = new Messages(b.ctx);
    const calls: Parameters<RenderFn>[] = [];
    const id = await messages.createOutgoing({ chatId, file: { source: file } }, fakeSend(calls));
    const d = messages.details(id)!;
    assert.match(d.file!, new RegExp(`^${dir}/blobs/[0-9a-f]{32}\\.prv$`));
    assert.equal(calls[0][0].file?.path, d.file);
    assert.equal(d.message.viewtype, "File");
    assert.equal(d.message.fileName, "secret.pdf.prv");
    assert.equal(d.message.fileMime, "application/octet-stream");
    assert.equal(d.message.fileBytes, 7);
    assert.deepEqual(await Deno.readFile(src), new Uint8Array([1, 2, 3, 4, 5, 6, 7]));
    b.store.close();
  });
});

Deno.test("createOutgoing() refuses unknown chats and recipients without a key", async () => {
  const b = bench();
  const messages = new Messages(b.ctx);
  await assert.rejects(messages.createOutgoing({ chatId: 77, text: "x" }, fakeSend()), {
    message: "chat 77 not found",
  });
  const carol = new Contacts(b.ctx).upsertAddressContact("carol@relay.test").id;
  const chatId = new Chats(b.ctx).getOrCreate1to1(carol).chatId;
  await assert.rejects(
    messages.createOutgoing({ chatId, text: "x" }, fakeSend()),
    /carol@relay\.test has no encryption key/,
  );
  b.store.close();
});

Deno.test("delete() removes messages, queued mail and blobs no other message uses", async () => {
  await withTempDir(async (dir) => {
    const b = bench(`${dir}/blobs`);
    const { chatId } = withChat(b);
    const src = `${dir}/a.txt`;
    await Deno.writeTextFile(src, "shared");
    await using file = await attach(src);
    const messages = new Messages(b.ctx);
    const render = fakeSend();
    const first = await messages.createOutgoing({ chatId, file: { source: file } }, render);
    const second = await messages.createOutgoing({ chatId, file: { source: file } }, render);
    const blob = messages.details(first)!.file!;
    assert.equal(messages.details(second)!.file, blob, "one blob for both");
    b.sink.take();
    await assert.rejects(messages.delete([first, 99]), { message: "message 99 not found" });
    assert.ok(messages.get(first), "nothing is deleted when one id is unknown");
    await messages.delete([first]);
    assert.deepEqual(b.sink.take(), [{ kind: "MsgDeleted", chatId, msgId: first }]);
    assert.equal(b.store.outbox.countForMessage(first), 0);
    assert.ok((await Deno.stat(blob)).isFile, "still used by the second message");
    await messages.delete([second]);
    await assert.rejects(Deno.stat(blob), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(src), "shared");
    b.store.close();
  });
});

Deno.test("idsOfChat() lists visible messages oldest first, with day markers on request", () => {
  const b = bench();
  const { chatId, bob } = withChat(b);
  const day = 86_400;
  const at = (timestamp: number, hidden = false) =>
    b.store.msgs.insert({ chatId, fromId: bob, state: 1, timestamp, hidden });
  const a = at(10 * day + 5);
  const c = at(11 * day + 1);
  at(10 * day + 7, true);
  const bb = at(10 * day + 9);
  const messages = new Messages(b.ctx);
  assert.deepEqual(messages.idsOfChat(chatId), [a, bb, c]);
  assert.deepEqual(messages.idsOfChat(chatId, { dayMarkers: true }), [9, a, bb, 9, c]);
  assert.deepEqual(messages.idsOfChat(chatId, { infoOnly: true }), []);
  assert.throws(() => messages.idsOfChat(5), { message: "chat 5 not found" });
  assert.deepEqual(messages.freshIds(), [c, bb, a]);
  b.store.close();
});

Deno.test("a spooled mail: removed when its message is not stored, sent, given up or deleted", async () => {
  await withTempDir(async (dir) => {
    const b = bench(`${dir}/blobs`);
    const { chatId } = withChat(b);
    const spoolFiles = () => [...Deno.readDirSync(`${dir}/spool`)].map((e) => e.name).sort();
    // `broken`: a mail createOutgoing cannot store (no recipients), after it was spooled.
    const spooling = (broken: boolean): SendSteps => ({
      admit: () => Promise.resolve(),
      render: async () => {
        const { name } = await b.ctx.spool.write((async function* () {
          yield new TextEncoder().encode("Subject: big\r\n\r\nbody\r\n");
        })());
        return {
          raw: new Uint8Array(0),
          spool: name,
          rfc724Mid: `m${name}@relay.test`,
          envelopeFrom: "me@relay.test",
          recipients: broken ? [] : ["bob@relay.test"],
        };
      },
    });
    await assert.rejects(
      new Messages(b.ctx).createOutgoing({ chatId, text: "x" }, spooling(true)),
      /without Message-ID or recipients/,
    );
    assert.deepEqual(spoolFiles(), [], "rendered but never stored: removed");

    const states = new MessageStates(b.ctx);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await new Messages(b.ctx).createOutgoing({ chatId, text: `${i}` }, spooling(false)));
    }
    const rows = b.store.outbox.due(Date.now());
    assert.deepEqual(rows.map((r) => r.raw.length), [0, 0, 0], "the rows hold no bytes");
    assert.equal(spoolFiles().length, 3);
    states.outboxSent(rows[0].id);
    states.outboxGaveUp(rows[1].id, "552 5.3.4 message file too big");
    await new Messages(b.ctx).delete([ids[2]]);
    await new Promise((r) => setTimeout(r, 20)); // removals after sent/gave up run after the commit
    assert.deepEqual(spoolFiles(), []);
    assert.equal(b.store.outbox.count(), 0);
    assert.equal(b.store.msgs.get(ids[1])?.state, 24, "given up: the message keeps its error");
    b.store.close();
  });
});

Deno.test("createOutgoing() asks precheck with the file's size before copying it", async () => {
  await withTempDir(async (dir) => {
    const b = bench(`${dir}/blobs`);
    const { chatId } = withChat(b);
    const src = `${dir}/huge.bin`;
    await Deno.writeFile(src, new Uint8Array(5000));
    await using file = await attach(src);
    const seen: { name: string; bytes: number; blob: string }[] = [];
    const steps: SendSteps = {
      ...fakeSend(),
      precheck: (d) => {
        seen.push({ name: d.file!.name, bytes: d.file!.bytes, blob: d.file!.blob });
        throw new Error("too large for one mail");
      },
    };
    await assert.rejects(
      new Messages(b.ctx).createOutgoing({ chatId, file: { source: file } }, steps),
      /too large for one mail/,
    );
    assert.deepEqual(seen, [{ name: "huge.bin", bytes: 5000, blob: "" }]);
    assert.equal(b.store.countMessages(), 0);
    assert.throws(() => Deno.statSync(`${dir}/blobs`), Deno.errors.NotFound, "nothing copied");
    b.store.close();
  });
});
