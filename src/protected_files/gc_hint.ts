/**
 * A hint to V8 that the buffers a stream just handed on are garbage: a minor GC (cheap: it frees
 * dead young ArrayBuffers) when the runtime exposes `gc` (`--v8-flags=--expose-gc`), else nothing.
 * WebCrypto returns a new buffer per call; without the hint V8 collects them late (BENCHMARKS.md).
 */

type Gc = (options?: { type?: "minor" | "major" }) => void;

/** Runs a minor GC if `gc` is exposed; returns whether it ran. */
export function collectYoungGarbage(): boolean {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== "function") return false;
  gc({ type: "minor" });
  return true;
}

/**
 * Counts chunks that became garbage across every stream of the process and runs
 * collectYoungGarbage() once per `every` of them: many short streams (1 MiB views) add up like
 * one long one, so their buffers are collected young instead of pushing V8 into major GCs.
 */
export class YoungGarbageHint {
  #count = 0;

  constructor(readonly every: number) {}

  /** Notes one more chunk of garbage; runs the hint on every `every`-th. */
  note(): void {
    if (++this.#count % this.every === 0) collectYoungGarbage();
  }

  /** Starts counting afresh (tests). */
  reset(): void {
    this.#count = 0;
  }
}
