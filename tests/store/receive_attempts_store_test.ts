/** Tests of the receive_attempts table: counted before each try, noted, cleared, pruned. */
import assert from "node:assert/strict";
import { RECEIVE_ATTEMPT_KEEP_SECONDS } from "../../src/store/receive_attempts_store.ts";
import { withStore } from "./_store.ts";

Deno.test("receiveAttempts.begin() returns the attempts before this one; clear() forgets", () => {
  withStore((s) => {
    assert.equal(s.receiveAttempts.begin("7:1", 1000), 0);
    assert.equal(s.receiveAttempts.begin("7:1", 1001), 1);
    assert.equal(s.receiveAttempts.begin("7:2", 1001), 0);
    assert.equal(s.receiveAttempts.attempts("7:1"), 2);
    s.receiveAttempts.failed("7:1", "disk full");
    assert.equal(s.receiveAttempts.lastError("7:1"), "disk full");
    s.receiveAttempts.clear("7:1");
    assert.equal(s.receiveAttempts.attempts("7:1"), 0);
    assert.equal(s.receiveAttempts.lastError("7:1"), "");
    assert.equal(s.receiveAttempts.attempts("7:2"), 1);
  });
});

Deno.test("receiveAttempts.begin() drops rows untouched for the keep period", () => {
  withStore((s) => {
    s.receiveAttempts.begin("7:1", 1000);
    s.receiveAttempts.begin("7:2", 1000 + RECEIVE_ATTEMPT_KEEP_SECONDS);
    s.receiveAttempts.begin("7:3", 1001 + RECEIVE_ATTEMPT_KEEP_SECONDS);
    assert.equal(s.receiveAttempts.attempts("7:1"), 0, "stale row pruned");
    assert.equal(s.receiveAttempts.attempts("7:2"), 1);
  });
});

Deno.test("receiveErrors.add() with a head and a larger size keeps the size, not the bytes", () => {
  withStore((s) => {
    s.receiveErrors.add({ reason: "too large", raw: new Uint8Array(10), size: 50_000_000 });
    const [rec] = s.receiveErrors.list();
    assert.equal(rec.size, 50_000_000);
    assert.equal(rec.raw, null);
  });
});
