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
