/**
 * The event bus: numbers events from 1, keeps a bounded replay ring, and fans out to bounded
 * per-subscriber queues. Publishing never waits for a reader; a subscriber that falls behind
 * loses its queue and reads a `lag` event first (DESIGN §4.8).
 */
import type { EventSink, GatewayEvent, SequencedEvent } from "./types.ts";

/** Default number of events kept for `Last-Event-ID` replay. */
export const DEFAULT_RING_SIZE = 1024;
/** Default number of undelivered events one subscriber may hold before it lags. */
export const DEFAULT_QUEUE_LIMIT = 4096;

/** Sizes of the bus. */
export interface EventBusOptions {
  readonly ringSize?: number;
  readonly queueLimit?: number;
}

/** Where a new subscription starts. */
export interface SubscribeOptions {
  /** Replay the buffered events after this id (SSE `Last-Event-ID`); absent = live only. */
  readonly lastEventId?: number;
  /** Overrides the bus's per-subscriber queue limit. */
  readonly queueLimit?: number;
}

/** Events dropped for one subscriber and not yet reported to it. */
interface Gap {
  missed: number;
  lastMissedId: number;
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
    if (this.#queue.length >= this.queueLimit) this.recordGap(this.#queue.length, item.id - 1);
    this.#queue.push(item);
    this.#wakeUp();
  }

  /** Drops everything queued and records `missed` events up to `lastMissedId` as a gap. */
  recordGap(missed: number, lastMissedId: number): void {
    this.#queue = [];
    if (missed <= 0 && this.#gap !== undefined) return;
    this.#gap = { missed: (this.#gap?.missed ?? 0) + missed, lastMissedId };
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
    const lag: GatewayEvent = {
      kind: "lag",
      missed: gap.missed,
      oldestAvailable: this.bus.oldestId,
    };
    return [{ id: gap.lastMissedId, event: lag }, ...out];
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
  readonly #ring: (SequencedEvent | undefined)[];
  readonly #queueLimit: number;
  readonly #subs = new Set<Subscription>();
  #lastId = 0;

  constructor(options: EventBusOptions = {}) {
    const ringSize = options.ringSize ?? DEFAULT_RING_SIZE;
    this.#queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT;
    if (!(ringSize >= 1 && this.#queueLimit >= 1)) {
      throw new RangeError("EventBus ringSize and queueLimit must be at least 1");
    }
    this.#ring = new Array(ringSize);
  }

  /** Id of the newest event (0 before the first). */
  get lastId(): number {
    return this.#lastId;
  }

  /** Id of the oldest event still replayable (`lastId + 1` while the ring is empty). */
  get oldestId(): number {
    return Math.max(1, this.#lastId - this.#ring.length + 1);
  }

  /** Number of open subscriptions. */
  get subscriberCount(): number {
    return this.#subs.size;
  }

  /** Assigns the next id, keeps the event for replay and queues it for every subscriber. */
  publish(event: GatewayEvent): SequencedEvent {
    const item: SequencedEvent = { id: ++this.#lastId, event };
    this.#ring[(item.id - 1) % this.#ring.length] = item;
    for (const sub of this.#subs) sub.deliver(item);
    return item;
  }

  /**
   * Opens a subscription. With `lastEventId` it first replays the buffered events after that
   * id; an id older than the ring yields a `lag` event before them, and an id the bus never
   * issued (the daemon restarted) yields a `lag` with `missed: 0` and the whole ring.
   */
  subscribe(options: SubscribeOptions = {}): Subscription {
    const sub = new Subscription(
      this,
      options.queueLimit ?? this.#queueLimit,
      (s) => this.#subs.delete(s),
    );
    const after = options.lastEventId;
    if (after !== undefined) this.#replay(sub, Math.max(0, Math.floor(after)));
    this.#subs.add(sub);
    return sub;
  }

  #replay(sub: Subscription, after: number): void {
    const oldest = this.oldestId;
    let from = after + 1;
    if (after > this.#lastId) {
      sub.recordGap(0, oldest - 1);
      from = oldest;
    } else if (from < oldest) {
      sub.recordGap(oldest - from, oldest - 1);
      from = oldest;
    }
    for (let id = from; id <= this.#lastId; id++) {
      sub.deliver(this.#ring[(id - 1) % this.#ring.length]!);
    }
  }

  /** Closes every subscription (before server shutdown, so SSE responses end). */
  close(): void {
    for (const sub of [...this.#subs]) sub.close();
  }
}
