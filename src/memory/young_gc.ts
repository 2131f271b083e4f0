/**
 * A hint to V8 that buffers a long stream handed on are garbage: a minor collection (cheap: it
 * frees dead young ArrayBuffers, whose memory V8 otherwise only reclaims once ~64 MB of them
 * piled up) after every `everyBytes` passed on, when the runtime exposes `gc`
 * (`--v8-flags=--expose-gc`, as the daemon runs: scripts/permissions.sh), else nothing.
 */

type Gc = (options?: { type?: "minor" | "major" }) => void;

/** Counts bytes that became garbage and runs a minor collection once per `everyBytes`. */
export class YoungGcEvery {
  #bytes = 0;

  constructor(readonly everyBytes: number) {}

  /** `n` more bytes are garbage; returns whether a collection ran. */
  note(n: number): boolean {
    this.#bytes += n;
    if (this.#bytes < this.everyBytes) return false;
    this.#bytes = 0;
    const gc = (globalThis as { gc?: Gc }).gc;
    if (typeof gc !== "function") return false;
    gc({ type: "minor" });
    return true;
  }
}

/** The send side's hint: streaming a file through MIME, OpenPGP and armor (4 MiB). */
export const SEND_STREAM_GC = new YoungGcEvery(4 * 1024 * 1024);
