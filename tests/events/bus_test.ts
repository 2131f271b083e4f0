/** Tests of the event bus: ids, fan-out, batching, bounded queues with lag, replay, shutdown. */
import assert from "node:assert/strict";
import { EventBus } from "../../src/events/bus.ts";
import { type GatewayEvent, type SequencedEvent, toWire } from "../../src/events/types.ts";

const info = (n: number): GatewayEvent => ({ kind: "Info", msg: `m${n}` });
const ids = (items: SequencedEvent[]) => items.map((i) => i.id);
const lag = (dropped: number, oldest: number) =>
  ({ type: "lag", account_id: 1, dropped, oldest_available: oldest }) as const;

Deno.test("EventBus numbers events from 1 and reports lastId/oldestId", () => {
  const bus = new EventBus({ ringSize: 3 });
  assert.equal(bus.lastId, 0);
  assert.equal(bus.oldestId, 1);
  assert.equal(bus.publish(info(1)).id, 1);
  assert.equal(bus.publish(info(2)).id, 2);
  for (let i = 3; i <= 5; i++) bus.publish(info(i));
  assert.equal(bus.lastId, 5);
  assert.equal(bus.oldestId, 3);
});

Deno.test("EventBus delivers to every subscriber; next() returns all queued at once", async () => {
  const bus = new EventBus();
  const a = bus.subscribe();
  const b = bus.subscribe();
  assert.equal(bus.subscriberCount, 2);
  for (let i = 1; i <= 3; i++) bus.publish(info(i));
  const first = await a.next();
  assert.deepEqual(ids(first), [1, 2, 3]);
  assert.deepEqual(first[0].event, toWire(info(1)));
  assert.deepEqual(first[0].event, { type: "Info", account_id: 1, msg: "m1" });
  assert.deepEqual(ids(await b.next()), [1, 2, 3]);
  const pending = a.next();
  bus.publish(info(4));
  bus.publish(info(5));
  assert.deepEqual(ids(await pending), [4, 5], "a burst wakes the reader once");
  a.close();
  b.close();
  assert.equal(bus.subscriberCount, 0);
});

Deno.test("EventBus subscribers without lastEventId get only live events", async () => {
  const bus = new EventBus();
  bus.publish(info(1));
  const sub = bus.subscribe();
  bus.publish(info(2));
  assert.deepEqual(ids(await sub.next()), [2]);
  sub.close();
});

Deno.test("Subscription.next() resolves [] on abort and on close", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe();
  const ac = new AbortController();
  const waiting = sub.next(ac.signal);
  ac.abort();
  assert.deepEqual(await waiting, []);
  assert.equal(sub.closed, false);
  const waiting2 = sub.next();
  await assert.rejects(() => sub.next(), /already waiting/);
  sub.close();
  assert.deepEqual(await waiting2, []);
  assert.equal(sub.closed, true);
  bus.publish(info(1));
  assert.deepEqual(await sub.next(), [], "a closed subscription stays empty");
  sub.close();
});

Deno.test("EventBus drops a full queue and reports lag first on the next read", async () => {
  const bus = new EventBus({ ringSize: 100, queueLimit: 4 });
  const sub = bus.subscribe();
  for (let i = 1; i <= 10; i++) bus.publish(info(i));
  // 1-4 fill the queue; 5 drops them (lag 4), 5-8 fill again; 9 drops 5-8 (lag 8), then 9, 10.
  const items = await sub.next();
  assert.deepEqual(items[0], { id: 8, event: lag(8, 1) });
  assert.deepEqual(ids(items.slice(1)), [9, 10]);
  bus.publish(info(11));
  assert.deepEqual(ids(await sub.next()), [11], "no lag once caught up");
  sub.close();
});

Deno.test("EventBus per-subscriber queueLimit overrides the default", async () => {
  const bus = new EventBus({ queueLimit: 100 });
  const small = bus.subscribe({ queueLimit: 1 });
  const big = bus.subscribe();
  bus.publish(info(1));
  bus.publish(info(2));
  assert.equal((await small.next())[0].event.type, "lag");
  assert.deepEqual(ids(await big.next()), [1, 2]);
  small.close();
  big.close();
});

Deno.test("EventBus replays after lastEventId from the ring", async () => {
  const bus = new EventBus({ ringSize: 10 });
  for (let i = 1; i <= 6; i++) bus.publish(info(i));
  const sub = bus.subscribe({ lastEventId: 3 });
  bus.publish(info(7));
  assert.deepEqual(ids(await sub.next()), [4, 5, 6, 7]);
  sub.close();
  const all = bus.subscribe({ lastEventId: 0 });
  assert.deepEqual(ids(await all.next()), [1, 2, 3, 4, 5, 6, 7]);
  all.close();
  const current = bus.subscribe({ lastEventId: 7 });
  bus.publish(info(8));
  assert.deepEqual(ids(await current.next()), [8]);
  current.close();
});

Deno.test("EventBus answers a lastEventId older than the ring with lag, then the ring", async () => {
  const bus = new EventBus({ ringSize: 4 });
  for (let i = 1; i <= 10; i++) bus.publish(info(i));
  const sub = bus.subscribe({ lastEventId: 2 });
  const items = await sub.next();
  assert.deepEqual(items[0], { id: 6, event: lag(4, 7) });
  assert.deepEqual(ids(items.slice(1)), [7, 8, 9, 10]);
  sub.close();
});

Deno.test("EventBus answers an id it never issued (new data dir) with lag and the whole ring", async () => {
  const bus = new EventBus({ ringSize: 10 });
  bus.publish(info(1));
  bus.publish(info(2));
  const sub = bus.subscribe({ lastEventId: 500 });
  const items = await sub.next();
  assert.deepEqual(items[0], { id: 0, event: lag(0, 1) });
  assert.deepEqual(ids(items.slice(1)), [1, 2]);
  sub.close();
});

Deno.test("EventBus.close() ends every subscription; later subscriptions start closed", async () => {
  const bus = new EventBus();
  const a = bus.subscribe();
  const b = bus.subscribe();
  const pending = a.next();
  bus.close();
  assert.deepEqual(await pending, []);
  assert.ok(a.closed && b.closed);
  assert.equal(bus.subscriberCount, 0);
  const late = bus.subscribe({ lastEventId: 0 });
  assert.equal(late.closed, true);
  assert.equal(bus.subscriberCount, 0);
});

Deno.test("EventBus rejects zero sizes", () => {
  assert.throws(() => new EventBus({ ringSize: 0 }), RangeError);
  assert.throws(() => new EventBus({ queueLimit: 0 }), RangeError);
});

Deno.test("EventBus.publish() never holds more than queueLimit for a reader that never reads", async () => {
  const bus = new EventBus({ queueLimit: 8 });
  const stuck = bus.subscribe();
  for (let i = 0; i < 100_000; i++) bus.publish(info(i)); // synchronous: never waits for it
  const items = await stuck.next();
  assert.ok(items.length <= 9, `a lag and at most queueLimit events, got ${items.length}`);
  const lag = items[0].event;
  assert.ok(lag.type === "lag", `a lag first, got ${lag.type}`);
  assert.equal(lag.dropped + items.length - 1, 100_000, "every event is delivered or counted");
  stuck.close();
});
