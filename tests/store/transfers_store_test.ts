/** Rows of `transfers`: one per transfer and direction, ended once, found by message. */
import assert from "node:assert/strict";
import { Store } from "../../src/store/mod.ts";

const base = {
  size: 1000,
  sha256: "ab".repeat(32),
  partSize: 300,
  parts: 4,
  name: "f.bin",
  mime: "application/octet-stream",
  now: 5,
};

Deno.test("an outgoing row queues, resends, confirms and ends once", () => {
  const store = Store.open(":memory:");
  try {
    const t = store.transfers;
    assert.equal(
      t.insert({ ...base, id: "x", direction: "out", msgId: 12, pending: ["b@x"] }),
      true,
    );
    assert.equal(t.insert({ ...base, id: "x", direction: "out" }), false, "no second row");
    t.setQueued("x", 2, [{ addr: "b@x", parts: [0] }], 9);
    const row = t.byMessage(12)!;
    assert.deepEqual([row.nextPart, row.resend, row.pending, row.updatedAt], [
      2,
      [{ addr: "b@x", parts: [0] }],
      ["b@x"],
      9,
    ]);
    t.answered("x", "b@x", "confirmed");
    t.answered("x", "b@x", "refused"); // answered already: no change
    assert.deepEqual([t.get("out", "x")!.pending, t.get("out", "x")!.confirmed], [[], ["b@x"]]);
    assert.equal(t.finish("out", "x", "", "done", "", 10), true);
    assert.equal(t.finish("out", "x", "", "failed", "late", 11), false, "ended once");
    assert.equal(t.get("out", "x")?.state, "done");
    assert.deepEqual(t.active("out"), []);
  } finally {
    store.close();
  }
});

Deno.test("an incoming row is keyed by its sender; its bitmap and partial blob are tracked", () => {
  const store = Store.open(":memory:");
  try {
    const t = store.transfers;
    t.insert({ ...base, id: "x", direction: "in", peerFingerprint: "F1", blob: ".transfer-p" });
    t.insert({ ...base, id: "x", direction: "in", peerFingerprint: "F2", blob: ".transfer-q" });
    t.setHave("x", "F1", new Uint8Array([5]), 7);
    t.noteRequest("x", "F1", 8);
    const row = t.get("in", "x", "F1")!;
    assert.deepEqual([...row.have], [5]);
    assert.deepEqual([row.requests, row.updatedAt], [1, 8]);
    assert.deepEqual([...t.activePartials()].sort(), [".transfer-p", ".transfer-q"]);
    t.finish("in", "x", "F2", "failed", "hash_mismatch", 9);
    assert.deepEqual([...t.activePartials()], [".transfer-p"]);
    t.finish("in", "x", "F1", "done", "", 9, 33);
    assert.equal(t.byMessage(33)?.peerFingerprint, "F1");
    assert.equal(t.get("in", "x", "F1")?.announce.length, 0, "the held mail is dropped");
  } finally {
    store.close();
  }
});
