/**
 * One memory-reducing garbage collection once a burst of large request bodies is over, so the
 * memory they took returns to the system instead of waiting for V8's next full collection, which
 * an idle daemon may not start for a long time (BENCHMARKS.md "Hostile load").
 */

/** The daemon's quiet period: a second without large bodies ends a burst. */
export const BURST_GC_QUIET_MS = 1_000;

/** Runs a full, memory-reducing collection (`exposedFullGc`). */
export type FullGc = () => void;

/** Starts a timer and returns its canceller (tests inject one they fire by hand). */
export type StartTimer = (run: () => void, ms: number) => () => void;

/** Options of `BurstGc`. */
export interface BurstGcOptions {
  /** How long no large body must arrive before the collection runs (ms). */
  readonly quietMs: number;
  /** The collection; default `exposedFullGc()`: without it, nothing is ever scheduled. */
  readonly gc?: FullGc | undefined;
  readonly startTimer?: StartTimer;
}

type ExposedGc = (
  options?: { type?: "minor" | "major"; flavor?: "regular" | "last-resort" },
) => void;

/**
 * The runtime's memory-reducing full collection, or undefined when `gc` is not exposed
 * (`--v8-flags=--expose-gc`, which the daemon runs with: scripts/permissions.sh). A regular major
 * collection frees the objects but V8 keeps their pages for reuse (after a flood of 1 MiB bodies
 * the daemon stayed 60 MB above rest); the "last-resort" flavour (V8's
 * `CollectAllAvailableGarbage`) also releases those pages, bringing it back to within a few MB.
 * It costs tens of ms, up to ~200 ms after a flood: once per burst, when the burst is over.
 */
export function exposedFullGc(): FullGc | undefined {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  return typeof gc === "function" ? () => gc({ type: "major", flavor: "last-resort" }) : undefined;
}

const realTimer: StartTimer = (run, ms) => {
  const id = setTimeout(run, ms);
  Deno.unrefTimer(id); // a pending collection never keeps the process alive
  return () => clearTimeout(id);
};

/**
 * Runs one collection when no large body has arrived for `quietMs` (checked every `quietMs`, so
 * between `quietMs` and twice that after the last one). While bodies keep coming, V8 collects on
 * its own as the heap grows; what it does not do is give memory back once the daemon falls idle.
 */
export class BurstGc {
  readonly #quietMs: number;
  readonly #gc: FullGc | undefined;
  readonly #startTimer: StartTimer;
  #cancel: (() => void) | undefined;
  #again = false;
  #runs = 0;

  constructor(options: BurstGcOptions) {
    this.#quietMs = options.quietMs;
    this.#gc = "gc" in options ? options.gc : exposedFullGc();
    this.#startTimer = options.startTimer ?? realTimer;
  }

  /** Collections run so far. */
  get runs(): number {
    return this.#runs;
  }

  /** True while a collection is scheduled. */
  get pending(): boolean {
    return this.#cancel !== undefined;
  }

  /** Notes that a large body was handled. */
  noteLargeBody(): void {
    if (this.#gc === undefined) return;
    if (this.#cancel !== undefined) this.#again = true;
    else this.#arm();
  }

  /** Drops a scheduled collection (at shutdown). */
  cancel(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #arm(): void {
    this.#again = false;
    this.#cancel = this.#startTimer(() => this.#fire(), this.#quietMs);
  }

  #fire(): void {
    this.#cancel = undefined;
    if (this.#again) return this.#arm(); // the burst goes on
    this.#runs++;
    this.#gc?.();
  }
}
