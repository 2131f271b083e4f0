/**
 * The `.prv` container's one hint to V8 that sealed or decrypted chunks are garbage
 * (src/memory/young_gc.ts): WebCrypto returns a new buffer per call, which V8 collects late.
 */
import { YoungGarbageHint } from "../memory/young_gc.ts";

/** Chunks of `.prv` garbage between two young-garbage collections (64 KiB each: 4 MiB). */
export const GC_HINT_CHUNKS = 64;

/**
 * The process's one hint for `.prv` buffers, shared by the reader's streams and the writer. A
 * 1 MiB view delivers 16 chunks: counted per stream it never fired, and the decrypted buffers of
 * many views started V8's major GCs instead (one every ~60 views, ~0.4 ms of CPU per view in
 * all: BENCHMARKS.md `/stream`).
 */
export const PRV_GC_HINT = new YoungGarbageHint(GC_HINT_CHUNKS);
