/** Tests of send_edit_request and delete_messages_for_all through dispatch, with fake renderers. */
import assert from "node:assert/strict";
import type { OutgoingRenderer } from "../../../src/core/send/outgoing.ts";
import { fakeSend } from "../../core/_messaging.ts";
import { call, result, rpcError, seeded } from "./_messaging.ts";

/** Renderers that record what they were asked for; each mail gets a new Message-ID. */
function fakeOutgoing() {
  const asked: unknown[][] = [];
  const mail = (to: readonly { addr: string }[]) =>
    Promise.resolve({
      raw: new Uint8Array([1]),
      rfc724Mid: `c${asked.length}@relay.test`,
      envelopeFrom: "me@relay.test",
      recipients: to.map((c) => c.addr),
    });
  const outgoing: OutgoingRenderer = {
    chat: fakeSend(),
    oweReadReceipts: () => {},
    renderControl: (c, to) => {
      asked.push(
        c.kind === "edit"
          ? ["edit", c.target, c.text]
          : ["delete", [...(c as { targets: readonly string[] }).targets]],
      );
      return mail(to);
    },
  };
  return { outgoing, asked };
}

async function sent(s: ReturnType<typeof seeded>, text: string) {
  return await result(s, "send_msg", [1, s.chatId, { text }]) as number;
}

Deno.test("send_edit_request (204) edits our message here and queues the edit mail", async () => {
  const { outgoing, asked } = fakeOutgoing();
  const s = seeded(undefined, outgoing);
  try {
    const id = await sent(s, "teh plan");
    const mid = s.store.msgs.get(id)!.rfc724Mid;
    const sub = s.bus.subscribe();
    assert.deepEqual(await call(s, "send_edit_request", [1, id, "the plan"]), { status: 204 });
    assert.deepEqual(asked, [["edit", mid, "the plan"]]);
    assert.deepEqual((await sub.next()).map((e) => e.event), [
      { type: "MsgsChanged", account_id: 1, chat_id: s.chatId, msg_id: id },
    ]);
    sub.close();
    const m = await result(s, "get_message", [1, id]) as { text: string; isEdited: boolean };
    assert.deepEqual([m.text, m.isEdited], ["the plan", true]);
    assert.ok(s.store.outbox.due(Date.now() + 1000).some((r) => r.rfc724Mid === "c1@relay.test"));
    // Refusals: empty text, someone else's message, unknown ids.
    assert.match(
      (await rpcError(s, "send_edit_request", [1, id, "  "])).message,
      /cannot be empty/,
    );
    const theirs = s.core.messages.storeIncoming({
      rfc724Mid: "bob@x",
      chatId: s.chatId,
      fromId: s.bob,
      text: "Bob's",
      timestampSent: 1_700_000_100,
    }).msgId;
    assert.match(
      (await rpcError(s, "send_edit_request", [1, theirs, "mine now"])).message,
      /only our own sent messages/,
    );
    assert.equal((await rpcError(s, "send_edit_request", [1, 999, "x"])).code, -1);
  } finally {
    s.store.close();
  }
});

Deno.test("delete_messages_for_all (204) deletes ours here and queues one request per chat", async () => {
  const { outgoing, asked } = fakeOutgoing();
  const s = seeded(undefined, outgoing);
  try {
    const a = await sent(s, "one");
    const b = await sent(s, "two");
    const mids = [a, b].map((id) => s.store.msgs.get(id)!.rfc724Mid);
    assert.deepEqual(await call(s, "delete_messages_for_all", [1, [a, b]]), { status: 204 });
    assert.deepEqual(asked, [["delete", mids]]);
    assert.equal(s.store.msgs.get(a), undefined);
    assert.equal(s.store.msgs.get(b), undefined);
    assert.equal((await rpcError(s, "delete_messages_for_all", [1, [a]])).code, -1);
  } finally {
    s.store.close();
  }
});
