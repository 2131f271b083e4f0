/** The owner's view of a recipient: not `active` while the file travels or when it never left. */
import assert from "node:assert/strict";
import { createCoreContext } from "../../src/core/context.ts";
import { deliveryState } from "../../src/protected_files/delivery_state.ts";
import { Store } from "../../src/store/mod.ts";

Deno.test("in_transfer while a recipient has not confirmed, undelivered after a failure", () => {
  const store = Store.open(":memory:");
  try {
    const ctx = createCoreContext({ store, events: { publish() {} }, blobDir: "/nonexistent" });
    const b = store.contacts.insert({ addr: "b@x", fingerprint: "B".repeat(40) });
    const c = store.contacts.insert({ addr: "c@x", fingerprint: "C".repeat(40) });
    const msgId = store.msgs.insert({
      rfc724Mid: "m@x",
      chatId: 10,
      fromId: 1,
      text: "",
      timestamp: 1,
      state: 20,
    });
    assert.equal(deliveryState(ctx, msgId, b), undefined, "one mail, sent: as the access says");
    store.transfers.insert({
      id: "x",
      direction: "out",
      msgId,
      size: 1,
      sha256: "a".repeat(64),
      partSize: 1,
      parts: 1,
      name: "f.prv",
      mime: "application/octet-stream",
      pending: ["b@x", "c@x"],
      now: 1,
    });
    assert.equal(deliveryState(ctx, msgId, b), "in_transfer");
    store.transfers.answered("x", "c@x", "confirmed");
    assert.equal(deliveryState(ctx, msgId, c), undefined, "c confirmed");
    store.transfers.answered("x", "b@x", "refused");
    assert.equal(deliveryState(ctx, msgId, b), "undelivered", "b refused");
    store.transfers.finish("out", "x", "", "done", "", 2);
    assert.equal(deliveryState(ctx, msgId, b), "undelivered", "still, once the others have it");
    assert.equal(deliveryState(ctx, msgId, c), undefined, "c has the file");
    store.msgs.insert({
      rfc724Mid: "n@x",
      chatId: 10,
      fromId: 1,
      text: "",
      timestamp: 1,
      state: 24,
    });
    assert.equal(deliveryState(ctx, msgId + 1, b), "undelivered", "a failed one-mail send");
  } finally {
    store.close();
  }
});
