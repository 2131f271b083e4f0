/**
 * What the domain modules share: the store, the clock, the blob directory and a transaction
 * runner that publishes the events a mutation queued, and wakes the mail sender for the mails
 * it queued, only after the outermost commit.
 */
import { DataDirLayout } from "../constants.ts";
import type { EventSink, GatewayEvent } from "../events/types.ts";
import type { Db, Store } from "../store/mod.ts";

/** Queues an event for publication after the current transaction commits. */
export type Emit = (event: GatewayEvent) => void;

/** Wakes whatever sends the outbox (the SMTP loop); called after a commit that queued mail. */
export type WakeSender = () => void;

/** What the open `run` of a database collected: events with their sinks, senders to wake. */
interface OpenRun {
  readonly events: [EventSink, GatewayEvent][];
  readonly wake: Set<WakeSender>;
}

/** The open `run` of each database. */
const openRuns = new WeakMap<Db, OpenRun>();

/**
 * Runs synchronous store work in one transaction and publishes the events queued during it once
 * the outermost `run` on the same database committed: nested `run`s (of this or any other
 * DomainTx on that database) join the outer transaction and its queue; a rollback drops the
 * queue. Code that groups several domain calls into one transaction (the reception pipeline)
 * must use `run`, not `store.db.tx`, or events would be published before the commit.
 */
export class DomainTx {
  constructor(
    private readonly db: Db,
    private readonly sink: EventSink,
    private readonly wakeSender: WakeSender = () => {},
  ) {}

  /** True while a `run` is open on this database. */
  get active(): boolean {
    return openRuns.has(this.db);
  }

  /**
   * Runs `fn` in a transaction; its events are published after the commit, in order, and the
   * senders of mails it queued (`mailQueued`) are woken after that.
   */
  run<T>(fn: (emit: Emit) => T): T {
    const outer = openRuns.get(this.db);
    if (outer !== undefined) return fn((e) => outer.events.push([this.sink, e]));
    const run: OpenRun = { events: [], wake: new Set() };
    openRuns.set(this.db, run);
    let out: T;
    try {
      out = this.db.tx(() => {
        const value = fn((e) => run.events.push([this.sink, e]));
        if (value instanceof Promise) {
          throw new TypeError("DomainTx.run() takes a synchronous function");
        }
        return value;
      });
    } finally {
      openRuns.delete(this.db);
    }
    for (const [sink, event] of run.events) sink.publish(event);
    for (const wake of run.wake) wake();
    return out;
  }

  /** Publishes at once, or after the commit when a `run` is open on this database. */
  emit(event: GatewayEvent): void {
    const run = openRuns.get(this.db);
    if (run !== undefined) run.events.push([this.sink, event]);
    else this.sink.publish(event);
  }

  /**
   * Says a mail was put into the outbox: the sender is woken after the commit of the open `run`
   * (at once without one), so the mail goes out without waiting for the sender's next poll and
   * never before its row is committed.
   */
  mailQueued(): void {
    const run = openRuns.get(this.db);
    if (run !== undefined) run.wake.add(this.wakeSender);
    else this.wakeSender();
  }
}

/** The shared context of `Contacts`, `Chats` and `Messages`. */
export interface CoreContext {
  readonly store: Store;
  readonly tx: DomainTx;
  /** Absolute path of the blob directory. */
  readonly blobDir: string;
  /** Current time in Unix milliseconds. */
  now(): number;
}

/** Inputs of `createCoreContext`. */
export interface CoreOptions {
  readonly store: Store;
  readonly events: EventSink;
  readonly blobDir: string;
  /** Clock in Unix ms (tests pin it); defaults to `Date.now`. */
  readonly now?: () => number;
  /** Wakes the mail sender after a commit that queued mail; default: nothing to wake. */
  readonly wakeSender?: WakeSender;
}

/** Builds the shared context; cheap, so one per request is fine (see `DomainTx`). */
export function createCoreContext(o: CoreOptions): CoreContext {
  return {
    store: o.store,
    tx: new DomainTx(o.store.db, o.events, o.wakeSender),
    blobDir: o.blobDir,
    now: o.now ?? Date.now,
  };
}

/** The blob directory inside a data directory (as `get_info` reports it). */
export function blobDirOf(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, "")}/${DataDirLayout.BLOB_DIR}`;
}

/** Unix seconds of the context's clock. */
export function nowSeconds(ctx: CoreContext): number {
  return Math.floor(ctx.now() / 1000);
}
