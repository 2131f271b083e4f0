/**
 * One memory-reducing garbage collection once a burst of work is over (large request bodies, many
 * connections, large mails), so the memory it took returns to the system instead of waiting for
 * V8's next full collection, which an idle daemon may not start for long (BENCHMARKS.md
 * "Hostile load").
 */
import { logger } from "../log.ts";

const log = logger("memory");

/** The daemon's settings: what a burst must leave behind, and the quiet that ends it. */
export const BURST_GC = Object.freeze({
  /** Estimated garbage that makes a collection worth it (it costs ~20 ms on an idle heap). */
  thresholdBytes: 4 * 1024 * 1024,
  /** A burst is over once nothing was noted for this long (ms). */
  quietMs: 1_000,
  /**
   * Garbage one closed connection leaves (its request and response objects, the runtime's and
   * hyper's state): 500 connections that sent nothing, or a truncated body each, left the idle
   * daemon 4–8 MB larger until a collection (bench/scenarios/hostile.ts).
   */
  connectionBytes: 16 * 1024,
});

/** Runs a full, memory-reducing collection (`exposedFullGc`). */
export type FullGc = () => void;

/** Starts a timer and returns its canceller (tests inject one they fire by hand). */
export type StartTimer = (run: () => void, ms: number) => () => void;

/** Options of `BurstGc`. */
export interface BurstGcOptions {
  /** Garbage noted since the last collection that schedules the next one (bytes). */
  readonly thresholdBytes: number;
  /** How long nothing must be noted before the scheduled collection runs (ms). */
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
 * It costs ~20 ms on an idle heap, up to ~200 ms after a flood: once per burst, when it is over.
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
 * Adds up the garbage the HTTP side and mail reception report (`note`); once it reaches
 * `thresholdBytes`, runs one collection when nothing has been noted for `quietMs` (checked every
 * `quietMs`, so between one and two quiet periods after the last note). While work keeps coming,
 * V8 collects on its own as its heap grows; what it does not do is give memory back once the
 * daemon falls idle.
 */
export class BurstGc {
  readonly #thresholdBytes: number;
  readonly #quietMs: number;
  readonly #gc: FullGc | undefined;
  readonly #startTimer: StartTimer;
  #cancel: (() => void) | undefined;
  #debt = 0;
  #again = false;
  #runs = 0;

  constructor(options: BurstGcOptions) {
    this.#thresholdBytes = options.thresholdBytes;
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

  /** Notes about `bytes` of garbage left by a request, a connection or a received mail. */
  note(bytes: number): void {
    if (this.#gc === undefined) return;
    this.#debt += bytes;
    if (this.#cancel !== undefined) this.#again = true;
    else if (this.#debt >= this.#thresholdBytes) this.#arm();
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
    const noted = this.#debt;
    this.#debt = 0;
    const t0 = performance.now();
    this.#gc?.();
    log.debug("a burst is over: full collection", {
      noted_mb: Math.round(noted / 1_048_576),
      gc_ms: Math.round(performance.now() - t0),
    });
  }
}
