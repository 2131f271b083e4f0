/**
 * Messages sent while a SecureJoin handshake is in progress: they wait (10, no mail), go out in
 * order once the join completes, and fail (24, MsgFailed) when it times out. Real keys; mails
 * handed between two in-memory accounts; the joiner's clock is injected.
 */
import assert from "node:assert/strict";
import { JOIN_WAIT_MS } from "../../../src/core/send/join_wait.ts";
import { Messages } from "../../../src/core/chats/messages.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { deliverAll, type TestAccount, testAccount } from "../_accounts.ts";

const START_MS = Date.UTC(2026, 10, 24, 3, 0, 0);

/** Bob's chat mails in his outbox table (waiting messages are written there when released). */
function outboxChatMails(bob: TestAccount) {
  return bob.store.outbox.due(Number.MAX_SAFE_INTEGER).filter((r) => r.msgId !== 0);
}

function send(bob: TestAccount, chatId: number, text: string): Promise<number> {
  return new Messages(bob.ctx).createOutgoing(
    { chatId, text },
    bob.send,
  );
}

async function joining() {
  const clock = { ms: START_MS };
  const alice = await testAccount("alice@relay.test", "Alice");
  const bob = await testAccount("bob@relay.test", "Bob", undefined, 0, () => clock.ms);
  const chatId = await bob.secureJoin.join(alice.secureJoin.createInvite());
  return { alice, bob, chatId, clock };
}

Deno.test("a message sent right after secure_join waits, then goes out once the join completes", async () => {
  const { alice, bob, chatId } = await joining();
  const first = await send(bob, chatId, "hello right after joining");
  const second = await send(bob, chatId, "and a second one");
  for (const id of [first, second]) {
    const m = bob.store.msgs.get(id)!;
    assert.deepEqual([m.state, m.rfc724Mid, m.error], [10, "", ""], "pending, not rendered");
  }
  assert.deepEqual(outboxChatMails(bob), [], "nothing is sent before the join completes");
  const changed = bob.sink.events.flatMap((e) =>
    e.kind === "MsgsChanged" && e.msgId !== 0 ? [e.msgId] : []
  );
  assert.deepEqual(changed, [first, second], "MsgsChanged for each, as for any send");

  await deliverAll(bob, alice); // vc-request
  await deliverAll(alice, bob); // vc-auth-required: key known, join not complete yet
  assert.deepEqual(outboxChatMails(bob), [], "still waiting at progress 400");
  const third = await send(bob, chatId, "sent at 400");
  assert.equal(bob.store.msgs.get(third)!.rfc724Mid, "", "waits behind the earlier ones");
  await deliverAll(bob, alice); // vc-request-with-auth
  await deliverAll(alice, bob); // vc-contact-confirm: the join completes, the messages go out

  const rows = outboxChatMails(bob);
  assert.deepEqual(rows.map((r) => r.msgId), [first, second, third], "in the order they were sent");
  for (const id of [first, second, third]) {
    assert.notEqual(bob.store.msgs.get(id)!.rfc724Mid, "", "rendered with a Message-ID");
  }
  const received: string[] = [];
  for (const row of rows) {
    const out = await alice.receiver.receive(row.raw);
    assert.equal(out.kind, "message");
    received.push(alice.store.msgs.get((out as { msgId: number }).msgId)!.text);
    new MessageStates(bob.ctx).outboxSent(row.id);
  }
  assert.deepEqual(received, ["hello right after joining", "and a second one", "sent at 400"]);
  assert.deepEqual([first, second, third].map((id) => bob.store.msgs.get(id)!.state), [
    20,
    20,
    20,
  ]);
  const later = await send(bob, chatId, "after the join");
  assert.notEqual(bob.store.msgs.get(later)!.rfc724Mid, "", "sent at once after the join");
});

Deno.test("a message waiting for a join that times out fails with the reason and MsgFailed", async () => {
  const { alice, bob, chatId, clock } = await joining();
  const id = await send(bob, chatId, "will not go out");
  await deliverAll(bob, alice); // vc-request; Alice never answers
  clock.ms += JOIN_WAIT_MS - 1000;
  await bob.settleJoinWaits();
  assert.equal(bob.store.msgs.get(id)!.state, 10, "still waiting just before the deadline");
  clock.ms += 2000;
  bob.sink.take();
  await bob.settleJoinWaits();
  const m = bob.store.msgs.get(id)!;
  assert.equal(m.state, 24);
  assert.equal(
    m.error,
    "the SecureJoin handshake with alice@relay.test did not complete within 10 minutes; " +
      "the message was not sent",
  );
  assert.deepEqual(bob.sink.take(), [{ kind: "MsgFailed", chatId, msgId: id }]);
  assert.deepEqual(outboxChatMails(bob), []);
  await assert.rejects(send(bob, chatId, "again"), /alice@relay\.test has no encryption key/);
});

Deno.test("waiting messages fail when a new send finds the join timed out, before it is refused", async () => {
  const { bob, chatId, clock } = await joining();
  const id = await send(bob, chatId, "waits");
  clock.ms += JOIN_WAIT_MS + 1000;
  await assert.rejects(send(bob, chatId, "too late"), /has no encryption key/);
  assert.equal(bob.store.msgs.get(id)!.state, 24);
  assert.equal(bob.store.countMessages(), 1, "the refused message is not stored");
});

Deno.test("messages left waiting when the join completed are sent by the start-up sweep", async () => {
  const { alice, bob, chatId } = await joining();
  const id = await send(bob, chatId, "survives a crash");
  await deliverAll(bob, alice);
  await deliverAll(alice, bob);
  await deliverAll(bob, alice);
  // The confirm's release is lost (as after a crash between the commit and the release).
  bob.store.securejoin.removeJoiner(bob.store.securejoin.joiners()[0].id);
  bob.outbox.splice(0);
  await bob.settleJoinWaits(); // periodic: only chats with join records
  assert.deepEqual(outboxChatMails(bob), []);
  await bob.settleJoinWaits(true); // at start: every chat with waiting messages
  assert.deepEqual(outboxChatMails(bob).map((r) => r.msgId), [id]);
});
