/** Tests of the outbox, receipts, receive-error and SecureJoin stores. */
import assert from "node:assert/strict";
import {
  RECEIVE_ERROR_KEEP,
  RECEIVE_ERROR_RAW_LIMIT,
} from "../../src/store/receive_errors_store.ts";
import { withStore } from "./_store.ts";

const mail = (mid: string, msgId = 10) => ({
  msgId,
  rfc724Mid: mid,
  envelopeFrom: "me@relay.test",
  recipients: ["bob@relay.test"],
  raw: new TextEncoder().encode(`Message-ID: <${mid}>\r\n\r\nx`),
});

Deno.test("OutboxStore queues mails, hands out due ones and counts failures", () => {
  withStore((s) => {
    const a = s.outbox.enqueue(mail("a@x"));
    const b = s.outbox.enqueue({ ...mail("b@x", 0), nextTryAt: 5_000 });
    assert.deepEqual(s.outbox.due(1_000).map((r) => r.id), [a]);
    assert.equal(s.outbox.nextDueAt(), 0);
    const row = s.outbox.get(a)!;
    assert.deepEqual(row.recipients, ["bob@relay.test"]);
    assert.deepEqual(row.raw, mail("a@x").raw);
    s.outbox.recordFailure(a, "421 try later", 9_000);
    assert.deepEqual(s.outbox.due(6_000).map((r) => r.id), [b]);
    assert.equal(s.outbox.get(a)?.attempts, 1);
    s.outbox.recordFailure(a, "connection refused", 9_500, false);
    assert.equal(s.outbox.get(a)?.attempts, 1, "an uncounted failure keeps the attempts");
    assert.equal(s.outbox.get(a)?.lastError, "connection refused");
    s.outbox.recordFailure(a, "421 try later", 9_000);
    assert.equal(s.outbox.get(a)?.lastError, "421 try later");
    assert.equal(s.outbox.nextDueAt(), 5_000);
    assert.equal(s.outbox.countForMessage(10), 1);
    assert.equal(s.outbox.removeForMessage(10), 1);
    assert.equal(s.outbox.removeForMessage(0), 0, "mails without a message are never bulk-removed");
    assert.equal(s.outbox.remove(b), true);
    assert.equal(s.outbox.nextDueAt(), undefined);
  });
});

Deno.test("OutboxStore.pullBack() makes rows timed by a clock that ran ahead due now", () => {
  withStore((s) => {
    const now = 1_700_000_000_000;
    const ahead = s.outbox.enqueue({ ...mail("ahead@x"), nextTryAt: now + 800 * 86_400_000 });
    const soon = s.outbox.enqueue({ ...mail("soon@x"), nextTryAt: now + 300_000 });
    const due = s.outbox.enqueue(mail("due@x"));
    assert.deepEqual(s.outbox.due(now).map((r) => r.id), [due]);
    assert.equal(s.outbox.pullBack(now, 360_000), 1);
    assert.equal(s.outbox.get(ahead)?.nextTryAt, now);
    assert.equal(s.outbox.get(soon)?.nextTryAt, now + 300_000, "a back-off in range stays");
    assert.deepEqual(s.outbox.due(now).map((r) => r.id), [due, ahead]);
    assert.equal(s.outbox.pullBack(now, 360_000), 0, "nothing left to pull back");
  });
});

Deno.test("ReceiptsStore keeps one receipt per message and contact", () => {
  withStore((s) => {
    const id = s.msgs.insert({ chatId: 10, fromId: 1, state: 20, timestamp: 1 });
    assert.equal(s.receipts.add(id, 11, 50), true);
    assert.equal(s.receipts.add(id, 11, 60), false);
    assert.equal(s.receipts.add(id, 12, 55), true);
    assert.deepEqual(s.receipts.forMessage(id), [
      { msgId: id, contactId: 11, timestamp: 50 },
      { msgId: id, contactId: 12, timestamp: 55 },
    ]);
    s.msgs.delete(id);
    assert.equal(s.receipts.count(id), 0, "receipts go with their message");
  });
});

Deno.test("ReceiveErrorsStore caps the raw bytes and the number of records", () => {
  withStore((s) => {
    const small = s.receiveErrors.add({ messageId: "x@y", reason: "bad", raw: new Uint8Array(3) });
    s.receiveErrors.add({ reason: "huge", raw: new Uint8Array(RECEIVE_ERROR_RAW_LIMIT + 1) });
    const [huge, first] = s.receiveErrors.list();
    assert.equal(first.id, small);
    assert.deepEqual(first.raw, new Uint8Array(3));
    assert.equal(huge.raw, null);
    assert.equal(huge.size, RECEIVE_ERROR_RAW_LIMIT + 1);
    for (let i = 0; i < RECEIVE_ERROR_KEEP; i++) {
      s.receiveErrors.add({ reason: `r${i}`, raw: new Uint8Array(1) });
    }
    assert.equal(s.receiveErrors.count(), RECEIVE_ERROR_KEEP);
    assert.equal(s.receiveErrors.list(1)[0].reason, `r${RECEIVE_ERROR_KEEP - 1}`);
  });
});

Deno.test("SecureJoinStore keeps tokens by kind and joiner handshakes", () => {
  withStore((s) => {
    s.securejoin.addToken("invite", "inv-token-123");
    s.securejoin.addToken("auth", "auth-token-456", 12);
    assert.equal(s.securejoin.findToken("invite", "inv-token-123")?.chatId, 0);
    assert.equal(s.securejoin.findToken("auth", "inv-token-123"), undefined);
    assert.equal(s.securejoin.tokens("auth", 12)[0].token, "auth-token-456");
    assert.throws(() => s.securejoin.addToken("auth", "inv-token-123"), /UNIQUE/);
    assert.equal(s.securejoin.removeToken("inv-token-123"), true);
    const invite = { kind: "contact", fingerprint: "A".repeat(40), addr: "a@x" };
    const id = s.securejoin.addJoiner({ invite, contactId: 10, chatId: 11, step: "vc-request" });
    s.securejoin.setJoinerStep(id, "vc-request-with-auth");
    const j = s.securejoin.joiner(id)!;
    assert.deepEqual(j.invite, invite);
    assert.equal(j.step, "vc-request-with-auth");
    assert.deepEqual(s.securejoin.joinersForContact(10).map((r) => r.id), [id]);
    assert.equal(s.securejoin.removeJoiner(id), true);
    assert.deepEqual(s.securejoin.joiners(), []);
  });
});
