/**
 * Keeps the event stream's ids and its replay tail across daemon restarts: ids are reserved in
 * durable blocks before they are issued (never reused, even after a crash) and events are
 * written in batches (one commit per batch, not per event; the database syncs every commit).
 */
import type { SequencedEvent, WireEvent } from "./types.ts";

/** One persisted event: its stream id and its wire object as JSON. */
export interface StoredEvent {
  readonly id: number;
  readonly data: string;
}

/** Where the journal keeps events and the id reservation (`store/events_store.ts`). */
export interface EventLogStore {
  /** The highest id reserved so far (0 for a new database); never below a stored id. */
  reservedId(): number;
  /** The newest `limit` stored events, oldest first. */
  tail(limit: number): StoredEvent[];
  /** In one commit: appends `rows`, keeps only the newest `keep` events, records `reservedId`. */
  save(rows: readonly StoredEvent[], keep: number, reservedId: number): void;
}

/** Tuning of the journal. */
export interface JournalOptions {
  /** Ids reserved by one durable write (default 256). */
  readonly block?: number;
  /** Longest time an event waits to be written, in ms (default 250). */
  readonly flushMs?: number;
  /** This many waiting events are written at once (default 256). */
  readonly maxBatch?: number;
  /** Told about a failed write; the events stay pending for the next one. */
  readonly onError?: (err: unknown) => void;
}

/** What an earlier run left: the newest events and the last id it may have issued. */
export interface JournalState {
  readonly lastId: number;
  readonly held: SequencedEvent[];
}

/**
 * The bus's persistence. A crash loses at most the events of the last `flushMs` (their ids stay
 * reserved, so a client that saw them gets `lag` on resume, never a reused id); a clean
 * `close()` writes everything and releases the unused part of the reservation.
 */
export class EventJournal {
  readonly #block: number;
  readonly #flushMs: number;
  readonly #maxBatch: number;
  readonly #onError: (err: unknown) => void;
  #keep = 0;
  #pending: StoredEvent[] = [];
  #reserved = 0;
  #dirty = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(private readonly store: EventLogStore, options: JournalOptions = {}) {
    this.#block = options.block ?? 256;
    this.#flushMs = options.flushMs ?? 250;
    this.#maxBatch = options.maxBatch ?? 256;
    this.#onError = options.onError ?? (() => {});
    if (!(this.#block >= 1 && this.#maxBatch >= 1)) {
      throw new RangeError("EventJournal block and maxBatch must be at least 1");
    }
  }

  /** Reads the stored state, keeping the newest `keep` events, and reserves the next block. */
  open(keep: number): JournalState {
    this.#keep = keep;
    const lastId = this.store.reservedId();
    const held = this.store.tail(keep).map((row) => ({
      id: row.id,
      event: JSON.parse(row.data) as WireEvent,
    }));
    this.#reserved = lastId + this.#block;
    // Before any id of this run is issued. When it cannot be written (a full disk), the start
    // goes on and the next batch writes it: until then a crash may issue those ids again.
    this.#dirty = true;
    this.flush();
    return { lastId, held };
  }

  /**
   * Queues `item` for the next batch. Called before the item reaches any subscriber: when its
   * id is beyond the reservation, the next block is reserved (with the batch) at once.
   */
  record(item: SequencedEvent): void {
    if (this.#closed) return;
    this.#pending.push({ id: item.id, data: JSON.stringify(item.event) });
    if (item.id > this.#reserved) {
      this.#reserved = item.id + this.#block - 1;
      this.#dirty = true;
      this.flush();
    } else if (this.#pending.length >= this.#maxBatch) {
      this.flush();
    } else if (this.#timer === undefined) {
      const timer = setTimeout(() => this.flush(), this.#flushMs);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  /** Writes the waiting events (and a changed reservation) in one commit. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0 && !this.#dirty) return;
    try {
      this.store.save(this.#pending, this.#keep, this.#reserved);
      this.#pending = [];
      this.#dirty = false;
    } catch (err) {
      // Older events than the replay tail would be trimmed anyway: keep the queue bounded.
      if (this.#pending.length > this.#keep) {
        this.#pending.splice(0, this.#pending.length - this.#keep);
      }
      this.#onError(err);
    }
  }

  /** Writes everything and shrinks the reservation to `lastId`, so the next run continues it. */
  close(lastId: number): void {
    if (this.#closed) return;
    if (lastId < this.#reserved) this.#reserved = lastId;
    this.#dirty = true;
    this.flush();
    this.#closed = true;
  }
}
