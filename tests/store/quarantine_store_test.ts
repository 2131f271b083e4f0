/**
 * Tests of the quarantined_mails table: whole mails kept with their reason and attempts, listed
 * oldest first, counted again on a failed retry, dropped one by one, never pruned.
 */
import assert from "node:assert/strict";
import { RECEIVE_ATTEMPT_KEEP_SECONDS } from "../../src/store/receive_attempts_store.ts";
import { RECEIVE_ERROR_KEEP } from "../../src/store/receive_errors_store.ts";
import { withStore } from "./_store.ts";

/** A mail with every byte value in it (NUL, CR, LF, 0xFF…), so a text round trip would show. */
function rawMail(tag: string, extra = 0): Uint8Array {
  const head = new TextEncoder().encode(`Message-ID: <${tag}@x>\r\n\r\n`);
  const out = new Uint8Array(head.length + 256 + extra);
  out.set(head);
  for (let i = 0; i < 256 + extra; i++) out[head.length + i] = i % 256;
  return out;
}

Deno.test("quarantine.add() keeps a mail whole; get() and list() show it without its bytes", () => {
  withStore((s) => {
    const raw = rawMail("q1", 70_000);
    const id = s.quarantine.add({
      messageId: "q1@x",
      reason: "failed 5 times: no key",
      attempts: 5,
      raw,
      at: 1_700_000_000,
    });
    assert.ok(id > 0);
    const expected = {
      id,
      messageId: "q1@x",
      reason: "failed 5 times: no key",
      attempts: 5,
      size: raw.byteLength,
      quarantinedAt: 1_700_000_000,
    };
    assert.deepEqual(s.quarantine.get(id), expected);
    assert.deepEqual(s.quarantine.list(), [expected]);
    assert.ok(!("raw" in s.quarantine.list()[0]), "listing carries no bytes");
    const back = s.quarantine.raw(id)!;
    assert.ok(back instanceof Uint8Array);
    assert.deepEqual(back, raw, "the bytes come back equal");
    assert.equal(s.quarantine.count(), 1);
  });
});

Deno.test("quarantine.list() is oldest first and honours its limit", () => {
  withStore((s) => {
    const ids = ["a", "b", "c"].map((tag, i) =>
      s.quarantine.add({
        messageId: `${tag}@x`,
        reason: tag,
        attempts: 1,
        raw: rawMail(tag),
        at: 3 - i,
      })
    );
    assert.deepEqual(s.quarantine.list().map((m) => m.id), ids, "the order they came in");
    assert.deepEqual(s.quarantine.list().map((m) => m.messageId), ["a@x", "b@x", "c@x"]);
    assert.deepEqual(s.quarantine.list(2).map((m) => m.messageId), ["a@x", "b@x"]);
  });
});

Deno.test("quarantine.failedAgain() counts one more attempt and keeps the new reason only", () => {
  withStore((s) => {
    const raw = rawMail("q2");
    const id = s.quarantine.add({ messageId: "q2@x", reason: "old", attempts: 5, raw, at: 10 });
    const other = s.quarantine.add({ messageId: "o@x", reason: "o", attempts: 2, raw, at: 11 });
    s.quarantine.failedAgain(id, "still no key");
    assert.deepEqual(s.quarantine.get(id), {
      id,
      messageId: "q2@x",
      reason: "still no key",
      attempts: 6,
      size: raw.byteLength,
      quarantinedAt: 10,
    });
    assert.deepEqual(s.quarantine.raw(id), raw, "the mail is untouched");
    assert.deepEqual([s.quarantine.get(other)!.attempts, s.quarantine.get(other)!.reason], [
      2,
      "o",
    ]);
  });
});

Deno.test("quarantine.remove() drops one row and says whether it existed", () => {
  withStore((s) => {
    const raw = rawMail("q3");
    const a = s.quarantine.add({ messageId: "a@x", reason: "r", attempts: 5, raw, at: 1 });
    const b = s.quarantine.add({ messageId: "b@x", reason: "r", attempts: 5, raw, at: 2 });
    assert.equal(s.quarantine.count(), 2);
    assert.equal(s.quarantine.remove(a), true);
    assert.equal(s.quarantine.remove(a), false, "already gone");
    assert.equal(s.quarantine.remove(9999), false);
    assert.equal(s.quarantine.get(a), undefined);
    assert.equal(s.quarantine.raw(a), undefined);
    assert.deepEqual(s.quarantine.list().map((m) => m.id), [b]);
    assert.equal(s.quarantine.count(), 1);
    const c = s.quarantine.add({ messageId: "c@x", reason: "r", attempts: 5, raw, at: 3 });
    assert.ok(c > a && c > b, "ids are never reused");
  });
});

Deno.test("quarantine keeps everything: no count cap, no age limit", () => {
  withStore((s) => {
    const raw = rawMail("old");
    const first = s.quarantine.add({ messageId: "old@x", reason: "r", attempts: 5, raw, at: 1 });
    for (let i = 0; i < RECEIVE_ERROR_KEEP + 5; i++) {
      s.quarantine.add({ messageId: `m${i}@x`, reason: "r", attempts: 5, raw, at: 2 + i });
    }
    // The other receive tables prune by count and by age; neither touches the quarantine.
    s.receiveErrors.add({ reason: "junk", raw: new Uint8Array(4) });
    s.receiveAttempts.begin("7:1", 10 * RECEIVE_ATTEMPT_KEEP_SECONDS);
    assert.equal(s.quarantine.count(), RECEIVE_ERROR_KEEP + 6);
    assert.equal(s.quarantine.get(first)?.messageId, "old@x");
    assert.deepEqual(s.quarantine.raw(first), raw);
    assert.equal(s.quarantine.list(RECEIVE_ERROR_KEEP + 10).length, RECEIVE_ERROR_KEEP + 6);
  });
});
