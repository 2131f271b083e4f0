/**
 * The event bus: numbers events, keeps a bounded replay tail, and fans out to bounded
 * per-subscriber queues. Publishing never waits for a reader; a subscriber that falls behind
 * loses its queue and reads a `lag` event first (docs/design-decisions.md §4). With a journal, ids
 * and the tail survive restarts, so `Last-Event-ID` from an earlier run resumes without silent
 * loss.
 */
import type { EventJournal } from "./journal.ts";
import { type EventSink, type GatewayEvent, type SequencedEvent, toWire } from "./types.ts";

/** Default number of events kept for `Last-Event-ID` replay. */
export const DEFAULT_RING_SIZE = 1024;
/** Default number of undelivered events one subscriber may hold before it lags. */
export const DEFAULT_QUEUE_LIMIT = 4096;

/** Sizes of the bus, and where it keeps its ids and tail across restarts. */
export interface EventBusOptions {
  readonly ringSize?: number;
  readonly queueLimit?: number;
  /** Persists ids and the replay tail; without one, ids start at 1 in every process. */
  readonly journal?: EventJournal;
}

/** Where a new subscription starts. */
export interface SubscribeOptions {
  /** Replay the held events after this id (SSE `Last-Event-ID`); absent = live only. */
  readonly lastEventId?: number;
  /** Overrides the bus's per-subscriber queue limit. */
  readonly queueLimit?: number;
}

/** Events dropped for one subscriber and not yet reported to it. */
interface Gap {
  dropped: number;
  lastDroppedId: number;
}

/** One reader's view of the bus; read with `next()`, release with `close()`. */
export class Subscription {
  #queue: SequencedEvent[] = [];
  #gap: Gap | undefined;
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(
    private readonly bus: EventBus,
    private readonly queueLimit: number,
    private readonly onClose: (sub: Subscription) => void,
  ) {}

  /** True after `close()` (by the reader, or by the bus shutting down). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Queues one event; on overflow the queue is dropped and remembered as a gap. */
  deliver(item: SequencedEvent): void {
    if (this.#closed) return;
    if (this.#queue.length >= this.queueLimit) this.#recordGap(this.#queue.length, item.id - 1);
    this.#queue.push(item);
    this.#wakeUp();
  }

  #recordGap(dropped: number, lastDroppedId: number): void {
    this.#queue = [];
    this.#gap = { dropped: (this.#gap?.dropped ?? 0) + dropped, lastDroppedId };
  }

  /**
   * Resolves with every queued event at once (a `lag` event first if events were dropped).
   * Waits while nothing is queued; resolves `[]` when `signal` aborts or the subscription
   * closes. One reader at a time.
   */
  async next(signal?: AbortSignal): Promise<SequencedEvent[]> {
    if (this.#wake !== undefined) throw new Error("Subscription.next() is already waiting");
    if (!this.#ready() && !this.#closed && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener("abort", done);
          this.#wake = undefined;
          resolve();
        };
        this.#wake = done;
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    return this.#closed ? [] : this.#take();
  }

  #ready(): boolean {
    return this.#queue.length > 0 || this.#gap !== undefined;
  }

  #take(): SequencedEvent[] {
    const out = this.#queue;
    this.#queue = [];
    const gap = this.#gap;
    if (gap === undefined) return out;
    this.#gap = undefined;
    return [this.bus.lagItem(gap.dropped, gap.lastDroppedId), ...out];
  }

  #wakeUp(): void {
    this.#wake?.();
  }

  /** Stops delivery and releases the subscription (idempotent); a waiting `next()` gets `[]`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#gap = undefined;
    this.onClose(this);
    this.#wakeUp();
  }
}

/** Numbers, buffers and fans out gateway events; the daemon's one `EventSink`. */
export class EventBus implements EventSink {
  /** The replay tail, ascending ids; ids may jump where a crashed run lost events. */
  readonly #held: SequencedEvent[] = [];
  readonly #ringSize: number;
  readonly #queueLimit: number;
  readonly #journal: EventJournal | undefined;
  readonly #subs = new Set<Subscription>();
  #lastId = 0;
  #closed = false;

  constructor(options: EventBusOptions = {}) {
    this.#ringSize = options.ringSize ?? DEFAULT_RING_SIZE;
    this.#queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT;
    if (!(this.#ringSize >= 1 && this.#queueLimit >= 1)) {
      throw new RangeError("EventBus ringSize and queueLimit must be at least 1");
    }
    this.#journal = options.journal;
    if (this.#journal !== undefined) {
      const state = this.#journal.open(this.#ringSize);
      this.#lastId = state.lastId;
      this.#held.push(...state.held.slice(-this.#ringSize));
    }
  }

  /** The newest id issued (or, after a crash, reserved by the run that crashed); 0 at first. */
  get lastId(): number {
    return this.#lastId;
  }

  /** Id of the oldest event still replayable (`lastId + 1` while none is held). */
  get oldestId(): number {
    return this.#held[0]?.id ?? this.#lastId + 1;
  }

  /** Number of open subscriptions. */
  get subscriberCount(): number {
    return this.#subs.size;
  }

  /**
   * Assigns the next id, journals the event and queues it for every subscriber. After
   * `close()` events are numbered but reach nobody.
   */
  publish(event: GatewayEvent): SequencedEvent {
    const item: SequencedEvent = { id: ++this.#lastId, event: toWire(event) };
    if (this.#closed) return item;
    this.#journal?.record(item);
    this.#held.push(item);
    if (this.#held.length > this.#ringSize) this.#held.shift();
    for (const sub of this.#subs) sub.deliver(item);
    return item;
  }

  /** A `lag` item telling a subscriber that `dropped` events up to `lastDroppedId` are gone. */
  lagItem(dropped: number, lastDroppedId: number): SequencedEvent {
    const lag = toWire({ kind: "lag", dropped, oldestAvailable: this.oldestId });
    return { id: lastDroppedId, event: lag };
  }

  /**
   * Opens a subscription. With `lastEventId` it first replays the held events after that id,
   * with a `lag` before each run of ids it no longer holds (older than the tail, or lost by a
   * crash). An id greater than any issued (the data directory was replaced) is answered with
   * a `lag` and every held event. After `close()` the subscription is closed at once.
   */
  subscribe(options: SubscribeOptions = {}): Subscription {
    const sub = new Subscription(
      this,
      options.queueLimit ?? this.#queueLimit,
      (s) => this.#subs.delete(s),
    );
    if (this.#closed) {
      sub.close();
      return sub;
    }
    const after = options.lastEventId;
    if (after !== undefined) this.#replay(sub, Math.max(0, Math.floor(after)));
    this.#subs.add(sub);
    return sub;
  }

  #replay(sub: Subscription, after: number): void {
    const unknown = after > this.#lastId;
    let prev = unknown ? 0 : after;
    let lagDue = unknown;
    for (let i = this.#firstAfter(prev); i < this.#held.length; i++) {
      const item = this.#held[i];
      if (lagDue || item.id > prev + 1) sub.deliver(this.lagItem(item.id - prev - 1, item.id - 1));
      lagDue = false;
      sub.deliver(item);
      prev = item.id;
    }
    if (lagDue || this.#lastId > prev) {
      sub.deliver(this.lagItem(this.#lastId - prev, this.#lastId));
    }
  }

  /** Index of the first held event with an id above `id` (binary search). */
  #firstAfter(id: number): number {
    let lo = 0;
    let hi = this.#held.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#held[mid].id <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Closes every subscription (before server shutdown, so SSE responses end) and writes the
   * journal, so the next run continues the ids.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const sub of [...this.#subs]) sub.close();
    this.#journal?.close(this.#lastId);
  }
}
