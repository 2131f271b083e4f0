/** Tests of send_reaction and get_message_reactions through dispatch, with a fake renderer. */
import assert from "node:assert/strict";
import type { OutgoingRenderer } from "../../../src/core/send/outgoing.ts";
import { fakeSend } from "../../core/_messaging.ts";
import { call, result, rpcError, seeded } from "./_messaging.ts";

/** A renderer whose reaction mails record what they were asked for. */
function fakeOutgoing() {
  const asked: [string, string, string[]][] = [];
  const outgoing: OutgoingRenderer = {
    chat: fakeSend(),
    oweReadReceipts: () => {},
    renderControl: (control, to) => {
      assert.equal(control.kind, "reaction");
      const { target, reaction } = control as { target: string; reaction: string };
      asked.push([target, reaction, to.map((c) => c.addr)]);
      return Promise.resolve({
        raw: new TextEncoder().encode(`reaction ${reaction}`),
        rfc724Mid: `r${asked.length}@relay.test`,
        envelopeFrom: "me@relay.test",
        recipients: to.map((c) => c.addr),
      });
    },
  };
  return { outgoing, asked };
}

Deno.test("send_reaction (204) stores our reaction, queues its mail and emits ReactionsChanged", async () => {
  const { outgoing, asked } = fakeOutgoing();
  const s = seeded(undefined, outgoing);
  try {
    const id = s.core.messages.storeIncoming({
      rfc724Mid: "hi@x",
      chatId: s.chatId,
      fromId: s.bob,
      text: "hi",
      timestampSent: 1_700_000_100,
    }).msgId;
    const sub = s.bus.subscribe();
    assert.deepEqual(await call(s, "send_reaction", [1, id, ["👍", "ignored"]]), { status: 204 });
    assert.deepEqual(asked, [["hi@x", "👍", ["bob@relay.test"]]]);
    assert.deepEqual((await sub.next()).map((e) => e.event), [
      { type: "ReactionsChanged", account_id: 1, chat_id: s.chatId, msg_id: id, contact_id: 1 },
    ]);
    sub.close();
    const queued = s.store.outbox.due(Date.now() + 1000);
    assert.deepEqual(queued.map((r) => [r.msgId, r.rfc724Mid]), [[0, "r1@relay.test"]]);
    assert.deepEqual(await result(s, "get_message_reactions", [1, id]), {
      reactionsByContact: { "1": ["👍"] },
      reactions: [{ emoji: "👍", count: 1, isFromSelf: true }],
    });
    // An empty list removes it (and still tells the peer).
    await call(s, "send_reaction", [1, id, []]);
    assert.equal(await result(s, "get_message_reactions", [1, id]), null);
    assert.deepEqual(asked.at(-1), ["hi@x", "", ["bob@relay.test"]]);
  } finally {
    s.store.close();
  }
});

Deno.test("send_reaction refuses unknown messages and bad params", async () => {
  const s = seeded(undefined, fakeOutgoing().outgoing);
  try {
    assert.deepEqual(await rpcError(s, "send_reaction", [1, 999, ["👍"]]), {
      code: -1,
      message: "message 999 not found",
    });
    const bad = await rpcError(s, "send_reaction", [1, 10, "👍"]);
    assert.equal(bad.code, -32602);
    assert.match(
      bad.message,
      /parameter 3 \(reaction\) of send_reaction must be an array of strings/,
    );
  } finally {
    s.store.close();
  }
});
