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

/** Chunks of `.prv` garbage between two young-garbage collections (64 KiB each: 4 MiB). */
export const GC_HINT_CHUNKS = 64;

/**
 * Counts chunks that became garbage (decrypted or sealed buffers handed on) and runs
 * collectYoungGarbage() once per `every` of them, whatever stream or encryption they came
 * from: many short ones (1 MiB views, small files) add up like one long one, so their buffers
 * are collected young instead of pushing V8 into major GCs.
 */
export class YoungGarbageHint {
  #count = 0;

  constructor(readonly every: number) {}

  /** Notes `chunks` more chunks of garbage (default 1); runs the hint each time `every` add up. */
  note(chunks = 1): void {
    this.#count += chunks;
    if (this.#count < this.every) return;
    this.#count %= this.every;
    collectYoungGarbage();
  }

  /** Starts counting afresh (tests). */
  reset(): void {
    this.#count = 0;
  }
}

/**
 * The process's one hint for `.prv` buffers, shared by the reader's streams and the writer. A
 * 1 MiB view delivers 16 chunks: counted per stream it never fired, and the decrypted buffers of
 * many views started V8's major GCs instead (one every ~60 views, ~0.4 ms of CPU per view in
 * all: BENCHMARKS.md `/stream`).
 */
export const PRV_GC_HINT = new YoungGarbageHint(GC_HINT_CHUNKS);
