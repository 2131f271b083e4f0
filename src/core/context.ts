/**
 * What the domain modules share: the store, the clock, the blob directory with the blobs held
 * for sends still rendering, and a transaction runner that publishes the events a mutation
 * queued, and wakes the mail sender for the mails it queued, only after the outermost commit.
 * The account core builds one per account (`src/account/core.ts`).
 */
import { DataDirLayout } from "../constants.ts";
import type { EventSink, GatewayEvent } from "../events/types.ts";
import { type Db, MailSpool, type Store } from "../store/mod.ts";

/** Queues an event for publication after the current transaction commits. */
export type Emit = (event: GatewayEvent) => void;

/** Wakes whatever sends the outbox (the SMTP loop); called after a commit that queued mail. */
export type WakeSender = () => void;

/** What the open `run` collected: events to publish, whether a mail was queued. */
interface OpenRun {
  readonly events: GatewayEvent[];
  mailQueued: boolean;
}

/**
 * Runs synchronous store work in one transaction and publishes the events queued during it once
 * the outermost `run` committed: nested `run`s join the outer transaction and its queue; a
 * rollback drops the queue. There is one DomainTx per account database (the account core's
 * context), so every domain object of the account joins the same open run. Code that groups
 * several domain calls into one transaction (the reception pipeline) must use `run`, not
 * `store.db.tx`, or events would be published before the commit.
 */
export class DomainTx {
  /** The open outermost `run`, if any. */
  #open: OpenRun | undefined;

  constructor(
    private readonly db: Db,
    private readonly sink: EventSink,
    private readonly wakeSender: WakeSender = () => {},
  ) {}

  /** True while a `run` is open. */
  get active(): boolean {
    return this.#open !== undefined;
  }

  /**
   * Runs `fn` in a transaction; its events are published after the commit, in order, and the
   * senders of mails it queued (`mailQueued`) are woken after that.
   */
  run<T>(fn: (emit: Emit) => T): T {
    const outer = this.#open;
    if (outer !== undefined) return fn((e) => outer.events.push(e));
    const run: OpenRun = { events: [], mailQueued: false };
    this.#open = run;
    let out: T;
    try {
      out = this.db.tx(() => {
        const value = fn((e) => run.events.push(e));
        if (value instanceof Promise) {
          throw new TypeError("DomainTx.run() takes a synchronous function");
        }
        return value;
      });
    } finally {
      this.#open = undefined;
    }
    for (const event of run.events) this.sink.publish(event);
    if (run.mailQueued) this.wakeSender();
    return out;
  }

  /** Publishes at once, or after the commit when a `run` is open. */
  emit(event: GatewayEvent): void {
    if (this.#open !== undefined) this.#open.events.push(event);
    else this.sink.publish(event);
  }

  /**
   * Says a mail was put into the outbox: the sender is woken after the commit of the open `run`
   * (at once without one), so the mail goes out without waiting for the sender's next poll and
   * never before its row is committed.
   */
  mailQueued(): void {
    if (this.#open !== undefined) this.#open.mailQueued = true;
    else this.wakeSender();
  }
}

/**
 * Blobs copied for sends still rendering, counted by path, so that a delete running meanwhile
 * does not remove a blob no stored message uses yet. One per account, in its context.
 */
export class BlobHolds {
  readonly #held = new Map<string, number>();

  /** Holds `path` until as many `release`s. */
  hold(path: string): void {
    this.#held.set(path, (this.#held.get(path) ?? 0) + 1);
  }

  release(path: string): void {
    const n = (this.#held.get(path) ?? 0) - 1;
    if (n > 0) this.#held.set(path, n);
    else this.#held.delete(path);
  }

  has(path: string): boolean {
    return this.#held.has(path);
  }
}

/** The shared context of `Contacts`, `Chats` and `Messages`. */
export interface CoreContext {
  readonly store: Store;
  readonly tx: DomainTx;
  /** Absolute path of the blob directory. */
  readonly blobDir: string;
  /** Blobs of sends still rendering (`Messages.createOutgoing`). */
  readonly blobHolds: BlobHolds;
  /** Rendered mails too large for the database (a sibling of the blob directory). */
  readonly spool: MailSpool;
  /** Current time in Unix milliseconds. */
  now(): number;
}

/** Inputs of `createCoreContext`. */
export interface CoreOptions {
  readonly store: Store;
  readonly events: EventSink;
  readonly blobDir: string;
  /** Clock in Unix ms (tests pin it); defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Wakes the mail sender after a commit that queued mail; default: nothing to wake. */
  readonly wakeSender?: WakeSender | undefined;
}

/** Builds the shared context of one account: build it once (see `DomainTx`). */
export function createCoreContext(o: CoreOptions): CoreContext {
  return {
    store: o.store,
    tx: new DomainTx(o.store.db, o.events, o.wakeSender),
    blobDir: o.blobDir,
    blobHolds: new BlobHolds(),
    spool: new MailSpool(spoolDirOf(o.blobDir)),
    now: o.now ?? Date.now,
  };
}

/** The spool directory beside blob directory `blobDir` (`DataDirLayout.SPOOL_DIR`). */
export function spoolDirOf(blobDir: string): string {
  const name = DataDirLayout.SPOOL_DIR.slice(DataDirLayout.SPOOL_DIR.lastIndexOf("/") + 1);
  return `${blobDir.replace(/\/+$/, "").replace(/\/[^/]*$/, "")}/${name}`;
}

/** The blob directory inside a data directory (as `get_info` reports it). */
export function blobDirOf(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, "")}/${DataDirLayout.BLOB_DIR}`;
}

/** Unix seconds of the context's clock. */
export function nowSeconds(ctx: CoreContext): number {
  return Math.floor(ctx.now() / 1000);
}
