/**
 * Tests of DomainTx (events only after the outermost commit, none after a rollback) and of the
 * blob holds.
 */
import assert from "node:assert/strict";
import { BlobHolds, DomainTx } from "../../src/core/context.ts";
import { Store } from "../../src/store/mod.ts";
import { RecordingSink } from "./_messaging.ts";

Deno.test("DomainTx.run() publishes queued events after the outermost commit", () => {
  const store = Store.open(":memory:");
  const sink = new RecordingSink();
  const tx = new DomainTx(store.db, sink);
  tx.run((emit) => {
    emit({ kind: "ChatModified", chatId: 10 });
    tx.run((inner) => inner({ kind: "ChatModified", chatId: 11 }));
    tx.emit({ kind: "ChatModified", chatId: 12 });
    assert.deepEqual(sink.events, [], "nothing before the commit");
    assert.equal(tx.active, true);
  });
  assert.deepEqual(sink.take().map((e) => "chatId" in e && e.chatId), [10, 11, 12]);
  tx.emit({ kind: "ChatModified", chatId: 13 });
  assert.deepEqual(sink.take().length, 1, "outside a run, emit publishes at once");
  store.close();
});

Deno.test("DomainTx.run() rolls back and drops the events when the function throws", () => {
  const store = Store.open(":memory:");
  const sink = new RecordingSink();
  const tx = new DomainTx(store.db, sink);
  assert.throws(() =>
    tx.run((emit) => {
      store.contacts.insert({ addr: "a@x" });
      emit({ kind: "ContactsChanged", contactId: 10 });
      throw new Error("boom");
    }), /boom/);
  assert.equal(store.contacts.count(), 0);
  assert.deepEqual(sink.events, []);
  assert.equal(tx.active, false);
  assert.throws(() => tx.run(() => Promise.resolve(1)), /synchronous/);
  store.close();
});

Deno.test("BlobHolds counts holds per path until as many releases", () => {
  const holds = new BlobHolds();
  holds.hold("/b/x.txt");
  holds.hold("/b/x.txt");
  holds.release("/b/x.txt");
  assert.equal(holds.has("/b/x.txt"), true, "one hold left");
  holds.release("/b/x.txt");
  assert.equal(holds.has("/b/x.txt"), false);
  assert.equal(holds.has("/b/y.txt"), false);
});

Deno.test("DomainTx.mailQueued() wakes the sender once, after the outermost commit", () => {
  const store = Store.open(":memory:");
  const sink = new RecordingSink();
  let wakes = 0;
  const tx = new DomainTx(store.db, sink, () => wakes++);
  tx.run(() => {
    tx.mailQueued();
    tx.run(() => tx.mailQueued());
    assert.equal(wakes, 0, "not before the commit");
  });
  assert.equal(wakes, 1, "once per commit, however many mails");
  tx.mailQueued();
  assert.equal(wakes, 2, "outside a run, at once");
  assert.throws(() =>
    tx.run(() => {
      tx.mailQueued();
      throw new Error("boom");
    })
  );
  assert.equal(wakes, 2, "a rollback wakes nobody");
  store.close();
});
