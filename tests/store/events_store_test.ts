/** Tests of the `events` / `event_ids` tables behind the event journal. */
import assert from "node:assert/strict";
import { EventBus } from "../../src/events/bus.ts";
import { EventJournal } from "../../src/events/journal.ts";
import { Store } from "../../src/store/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { withStore } from "./_store.ts";

Deno.test("EventsStore.save() appends, trims to keep and records the reservation in one go", () => {
  withStore((s) => {
    assert.equal(s.events.reservedId(), 0);
    assert.deepEqual(s.events.tail(10), []);
    s.events.save([{ id: 1, data: '{"a":1}' }, { id: 2, data: '{"a":2}' }], 2, 8);
    s.events.save([{ id: 5, data: '{"a":5}' }], 2, 8);
    assert.deepEqual(s.events.tail(10), [{ id: 2, data: '{"a":2}' }, { id: 5, data: '{"a":5}' }]);
    assert.deepEqual(s.events.tail(1), [{ id: 5, data: '{"a":5}' }]);
    assert.equal(s.events.reservedId(), 8);
    s.events.save([], 2, 5);
    assert.equal(s.events.reservedId(), 5);
    s.events.save([], 2, 1);
    assert.equal(s.events.reservedId(), 5, "never below a stored id");
  });
});

Deno.test("EventBus over the store: ids and the replay tail survive closing the database", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/gateway.db`;
    const open = () => {
      const store = Store.open(path);
      return { store, bus: new EventBus({ journal: new EventJournal(store.events) }) };
    };
    const a = open();
    a.bus.publish({ kind: "IncomingMsg", chatId: 10, msgId: 11 });
    a.bus.publish({ kind: "MsgRead", chatId: 10, msgId: 12 });
    a.bus.close();
    a.store.close();

    const b = open();
    b.bus.publish({ kind: "ContactsChanged", contactId: 12 });
    const sub = b.bus.subscribe({ lastEventId: 1 });
    const items = await sub.next();
    assert.deepEqual(items, [
      { id: 2, event: { type: "MsgRead", account_id: 1, chat_id: 10, msg_id: 12 } },
      { id: 3, event: { type: "ContactsChanged", account_id: 1, contact_id: 12 } },
    ]);
    sub.close();
    b.bus.close();
    b.store.close();
  });
});
