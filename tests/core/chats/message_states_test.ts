/** Tests of delivery states: forward-only transitions, their events, markSeen and MDN targets. */
import assert from "node:assert/strict";
import { Chats } from "../../../src/core/chats/chats.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { Messages } from "../../../src/core/chats/messages.ts";
import { addPeer, type Bench, bench, fakeSend, NOW_S } from "../_messaging.ts";

async function sent(b: Bench): Promise<{ chatId: number; msgId: number; bob: number }> {
  const bob = addPeer(b, "bob@relay.test", "b", "Bob");
  const chatId = new Chats(b.ctx).getOrCreate1to1(bob).chatId;
  const msgId = await new Messages(b.ctx).createOutgoing({ chatId, text: "hi" }, fakeSend());
  b.sink.take();
  return { chatId, msgId, bob };
}

Deno.test("outgoing states move 10 → 20 → 26 → 28 with their events, never back", async () => {
  const b = bench();
  const { chatId, msgId, bob } = await sent(b);
  const states = new MessageStates(b.ctx);
  const state = () => b.store.msgs.get(msgId)!.state;
  const [row] = b.store.outbox.due(Date.now());
  assert.equal(states.outboxSent(row.id), msgId);
  assert.equal(state(), 20);
  assert.equal(b.store.outbox.count(), 0);
  assert.equal(states.markDeliveredToDevice(msgId), true);
  assert.equal(state(), 26);
  assert.equal(states.markReadBy(msgId, bob, NOW_S), true);
  assert.equal(state(), 28);
  assert.deepEqual(b.sink.take(), [
    { kind: "MsgDelivered", chatId, msgId },
    { kind: "MsgDelivered", chatId, msgId },
    { kind: "MsgRead", chatId, msgId },
  ]);
  assert.equal(states.markDeliveredToDevice(msgId), false);
  assert.equal(states.markFailed(msgId, "late bounce"), false);
  assert.equal(states.markReadBy(msgId, bob, NOW_S), false, "a second receipt is not new");
  assert.equal(state(), 28);
  assert.deepEqual(b.sink.take(), []);
  assert.equal(states.outboxSent(row.id), undefined, "unknown outbox rows are ignored");
  b.store.close();
});

Deno.test("a read receipt before the relay's answer is not undone by the late 20", async () => {
  const b = bench();
  const { chatId, msgId, bob } = await sent(b);
  const states = new MessageStates(b.ctx);
  states.markReadBy(msgId, bob, NOW_S);
  const [row] = b.store.outbox.due(Date.now());
  states.outboxSent(row.id);
  assert.equal(b.store.msgs.get(msgId)?.state, 28);
  assert.deepEqual(b.sink.take(), [{ kind: "MsgRead", chatId, msgId }]);
  b.store.close();
});

Deno.test("outboxGaveUp() fails the message with its error and MsgFailed", async () => {
  const b = bench();
  const { chatId, msgId } = await sent(b);
  const states = new MessageStates(b.ctx);
  const [row] = b.store.outbox.due(Date.now());
  assert.equal(states.outboxGaveUp(row.id, "550 mailbox unavailable"), msgId);
  const m = b.store.msgs.get(msgId)!;
  assert.equal(m.state, 24);
  assert.equal(m.error, "550 mailbox unavailable");
  assert.equal(b.store.outbox.count(), 0);
  assert.deepEqual(b.sink.take(), [{ kind: "MsgFailed", chatId, msgId }]);
  b.store.close();
});

Deno.test("read receipts for messages we did not send are ignored", () => {
  const b = bench();
  const bob = addPeer(b, "bob@relay.test", "b");
  const chatId = new Chats(b.ctx).getOrCreate1to1(bob).chatId;
  const { msgId } = new Messages(b.ctx).storeIncoming({
    rfc724Mid: "in@x",
    chatId,
    fromId: bob,
    text: "hi",
    timestampSent: NOW_S,
  });
  b.sink.take();
  assert.equal(new MessageStates(b.ctx).markReadBy(msgId, bob, NOW_S), false);
  assert.equal(b.store.receipts.count(msgId), 0);
  assert.deepEqual(b.sink.take(), []);
  b.store.close();
});

Deno.test("markSeen() moves fresh incoming to 16 and returns those that asked for a receipt", async () => {
  const b = bench();
  const { chatId, msgId: outgoing, bob } = await sent(b);
  const messages = new Messages(b.ctx);
  const incoming = (mid: string, extra = {}) =>
    messages.storeIncoming({
      rfc724Mid: mid,
      chatId,
      fromId: bob,
      text: mid,
      timestampSent: NOW_S,
      ...extra,
    }).msgId;
  const asks = incoming("a@x", { mdnRequested: true });
  const quiet = incoming("b@x");
  const hidden = incoming("c@x", { mdnRequested: true, hidden: true });
  b.sink.take();
  assert.equal(b.store.chats.freshCount(chatId), 2);
  const states = new MessageStates(b.ctx);
  const receipts = states.markSeen([asks, quiet, hidden, outgoing, 999, asks]);
  assert.deepEqual(receipts.map((m) => [m.id, m.state, m.rfc724Mid]), [[asks, 16, "a@x"]]);
  assert.deepEqual(b.sink.take(), [{ kind: "MsgsNoticed", chatId }]);
  assert.equal(b.store.chats.freshCount(chatId), 0);
  assert.equal(b.store.msgs.get(outgoing)?.state, 10, "outgoing messages are untouched");
  assert.deepEqual(states.markSeen([asks, quiet]), [], "seen messages are not seen again");
  assert.deepEqual(b.sink.take(), []);
  assert.deepEqual(messages.freshIds(), []);
  b.store.close();
});
