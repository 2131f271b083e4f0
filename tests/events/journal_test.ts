/**
 * Tests of the event journal behind the bus: ids continue across restarts, the replay tail
 * survives them, writes are batched, and a crash never reuses an id (resumers get `lag`).
 */
import assert from "node:assert/strict";
import { EventBus } from "../../src/events/bus.ts";
import { EventJournal, type EventLogStore, type StoredEvent } from "../../src/events/journal.ts";
import type { GatewayEvent, SequencedEvent } from "../../src/events/types.ts";

/** An in-memory EventLogStore that counts commits; `crashCopy()` is what a crash leaves. */
class MemoryLog implements EventLogStore {
  rows: StoredEvent[] = [];
  reserved = 0;
  commits = 0;
  failing = false;

  reservedId(): number {
    return Math.max(this.reserved, this.rows.at(-1)?.id ?? 0);
  }
  tail(limit: number): StoredEvent[] {
    return this.rows.slice(-limit);
  }
  save(rows: readonly StoredEvent[], keep: number, reservedId: number): void {
    if (this.failing) throw new Error("disk full");
    this.commits++;
    this.rows = [...this.rows, ...rows].slice(-keep);
    this.reserved = reservedId;
  }
  /** The durable state as a separate log (what the next process would find). */
  crashCopy(): MemoryLog {
    const copy = new MemoryLog();
    copy.rows = [...this.rows];
    copy.reserved = this.reserved;
    return copy;
  }
}

const msg = (n: number): GatewayEvent => ({ kind: "IncomingMsg", chatId: 10, msgId: n });
const ids = (items: SequencedEvent[]) => items.map((i) => i.id);
const types = (items: SequencedEvent[]) => items.map((i) => i.event.type);

/** A bus over `log` with a long flush delay, so only explicit flushes and close() write. */
function busOver(log: EventLogStore, ringSize = 16, block = 8): EventBus {
  return new EventBus({ ringSize, journal: new EventJournal(log, { block, flushMs: 60_000 }) });
}

Deno.test("EventBus with a journal continues ids after a clean restart and replays across it", async () => {
  const log = new MemoryLog();
  const first = busOver(log);
  for (let n = 1; n <= 3; n++) first.publish(msg(n));
  first.close();
  assert.deepEqual(log.rows.map((r) => r.id), [1, 2, 3]);
  assert.equal(log.reserved, 3, "a clean stop releases the unused reservation");

  const second = busOver(log);
  assert.equal(second.lastId, 3);
  assert.equal(second.publish(msg(4)).id, 4, "ids continue, never restart at 1");
  second.publish(msg(5));
  const resumed = second.subscribe({ lastEventId: 2 }); // a client of the first run
  const items = await resumed.next();
  assert.deepEqual(ids(items), [3, 4, 5], "what it missed from both runs, no lag");
  assert.deepEqual(items[0].event, { type: "IncomingMsg", account_id: 1, chat_id: 10, msg_id: 3 });
  resumed.close();
  second.close();
});

Deno.test("EventBus with a journal: a crash loses no id silently (lag, then the rest)", async () => {
  const log = new MemoryLog();
  const running = busOver(log, 16, 8);
  for (let n = 1; n <= 3; n++) running.publish(msg(n)); // seen by a client, not yet written
  const durable = log.crashCopy(); // the process dies here: only the reservation is on disk
  assert.equal(durable.reserved, 8);
  assert.deepEqual(durable.rows, []);
  running.close();

  const after = busOver(durable, 16, 8);
  assert.equal(after.publish(msg(9)).id, 9, "the next run starts beyond the reservation");
  const client = after.subscribe({ lastEventId: 2 }); // it had seen 1 and 2 before the crash
  const items = await client.next();
  assert.deepEqual(types(items), ["lag", "IncomingMsg"]);
  assert.deepEqual(items[0], {
    id: 8,
    event: { type: "lag", account_id: 1, dropped: 6, oldest_available: 9 },
  }, "ids 3-8 may have been issued and lost: counted as dropped (an upper bound)");
  assert.equal(items[1].id, 9);
  client.close();
  after.close();
});

Deno.test("EventBus with a journal: a resume id before the restart and before new events gets lag", async () => {
  const log = new MemoryLog();
  const running = busOver(log, 16, 4);
  for (let n = 1; n <= 2; n++) running.publish(msg(n));
  running.close();
  const durable = log.crashCopy();
  durable.reserved = 6; // a crash after reserving 3-6 and issuing some of them
  const after = busOver(durable, 16, 4);
  const client = after.subscribe({ lastEventId: 1 });
  const items = await client.next();
  assert.deepEqual(ids(items), [2, 6]);
  assert.deepEqual(items[1].event, { type: "lag", account_id: 1, dropped: 4, oldest_available: 1 });
  client.close();
  after.close();
});

Deno.test("EventBus with a journal keeps only the newest ringSize events across restarts", async () => {
  const log = new MemoryLog();
  const first = busOver(log, 4);
  for (let n = 1; n <= 10; n++) first.publish(msg(n));
  first.close();
  assert.deepEqual(log.rows.map((r) => r.id), [7, 8, 9, 10]);
  const second = busOver(log, 4);
  const client = second.subscribe({ lastEventId: 3 });
  const items = await client.next();
  assert.deepEqual(ids(items), [6, 7, 8, 9, 10]);
  assert.deepEqual(items[0].event, { type: "lag", account_id: 1, dropped: 3, oldest_available: 7 });
  client.close();
  second.close();
});

Deno.test("EventBus with a journal answers a resume id from the future with lag and everything", async () => {
  const log = new MemoryLog();
  const bus = busOver(log);
  bus.publish(msg(1));
  bus.publish(msg(2));
  const client = bus.subscribe({ lastEventId: 900 }); // e.g. the data directory was replaced
  const items = await client.next();
  assert.deepEqual(ids(items), [0, 1, 2]);
  assert.deepEqual(items[0].event, { type: "lag", account_id: 1, dropped: 0, oldest_available: 1 });
  client.close();
  bus.close();
});

Deno.test("EventJournal writes in batches and reserves ids in blocks (not one commit per event)", () => {
  const log = new MemoryLog();
  const bus = new EventBus({
    ringSize: 1000,
    journal: new EventJournal(log, { block: 100, maxBatch: 50, flushMs: 60_000 }),
  });
  assert.equal(log.commits, 1, "opening reserves the first block");
  for (let n = 1; n <= 49; n++) bus.publish(msg(n));
  assert.equal(log.commits, 1, "49 events wait for their batch");
  bus.publish(msg(50));
  assert.equal(log.commits, 2, "the 50th writes the batch");
  for (let n = 51; n <= 100; n++) bus.publish(msg(n));
  assert.equal(log.commits, 3);
  assert.equal(log.reserved, 100);
  bus.publish(msg(101)); // beyond the reservation: written with the next block at once
  assert.equal(log.commits, 4);
  assert.equal(log.reserved, 200);
  assert.equal(log.rows.at(-1)?.id, 101);
  bus.close();
  assert.equal(log.reserved, 101);
});

Deno.test("EventJournal writes waiting events after flushMs", async () => {
  const log = new MemoryLog();
  const bus = new EventBus({ journal: new EventJournal(log, { flushMs: 1 }) });
  bus.publish(msg(1));
  assert.equal(log.rows.length, 0);
  for (let i = 0; i < 100 && log.rows.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.deepEqual(log.rows.map((r) => r.id), [1]);
  bus.close();
});

Deno.test("EventJournal keeps events after a failed write and reports it", () => {
  const log = new MemoryLog();
  const errors: unknown[] = [];
  const bus = new EventBus({
    journal: new EventJournal(log, {
      maxBatch: 1,
      flushMs: 60_000,
      onError: (e) => errors.push(e),
    }),
  });
  log.failing = true;
  const item = bus.publish(msg(1));
  assert.equal(item.id, 1, "publishing goes on");
  assert.equal(errors.length, 1);
  log.failing = false;
  bus.close();
  assert.deepEqual(log.rows.map((r) => r.id), [1], "written by the next flush");
});

Deno.test("a journal whose reservation cannot be written at start opens, and writes it later", () => {
  const log = new MemoryLog();
  log.failing = true; // a full disk
  const errors: unknown[] = [];
  const journal = new EventJournal(log, {
    block: 8,
    flushMs: 60_000,
    onError: (e) => errors.push(e),
  });
  const bus = new EventBus({ ringSize: 16, journal });
  assert.equal(errors.length, 1, "the failed reservation is reported, not thrown");
  assert.equal(bus.publish(msg(1)).id, 1);
  log.failing = false;
  journal.flush();
  assert.equal(log.reserved, 8, "the reservation is written with the next batch");
  assert.deepEqual(log.rows.map((r) => r.id), [1]);
  bus.close();
});
