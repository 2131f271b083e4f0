/**
 * Every 4 MiB moved, a hint to V8 that the chunks handed on are garbage: a minor GC when the
 * runtime exposes `gc` (the daemon runs with `--v8-flags=--expose-gc`), else nothing. QUIC reads
 * and the source give a new buffer per chunk, which V8 would otherwise collect late (RSS grows).
 */

type Gc = (options?: { type?: "minor" | "major" }) => void;

const EVERY_BYTES = 4 * 1024 * 1024;

/** Returns `moved(bytes)`, which runs a minor GC each time another 4 MiB have passed. */
export function youngGarbageHint(): (bytes: number) => void {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== "function") return () => {};
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < EVERY_BYTES) return;
    since = 0;
    gc({ type: "minor" });
  };
}
