/**
 * Hints to V8 that the buffers a long stream handed on are garbage: a minor collection (cheap: it
 * frees dead young ArrayBuffers, whose memory V8 otherwise reclaims late, once many MB of them
 * piled up) after every so many units passed on, when the runtime exposes `gc`
 * (`--v8-flags=--expose-gc`, as the daemon runs: scripts/permissions.sh), else nothing.
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
 * Counts units (bytes or chunks) that became garbage and runs collectYoungGarbage() once per
 * `every` of them, whatever stream they came from: many short streams add up like one long one.
 */
export class YoungGarbageHint {
  #count = 0;

  constructor(readonly every: number) {}

  /** Notes `units` more garbage (default 1); runs the hint each time `every` add up. */
  note(units = 1): void {
    this.#count += units;
    if (this.#count < this.every) return;
    this.#count %= this.every;
    collectYoungGarbage();
  }

  /** Starts counting afresh (tests). */
  reset(): void {
    this.#count = 0;
  }
}

/** Bytes between two hints on the send side and on the direct path (4 MiB). */
export const STREAM_GC_BYTES = 4 * 1024 * 1024;

/** The send side's hint: streaming a file through MIME, OpenPGP, armor and SMTP. */
export const SEND_STREAM_GC = new YoungGarbageHint(STREAM_GC_BYTES);
