/**
 * Reading a `.prv` (docs/prv-format.md, Reading): check the header and the final chunk at open,
 * then decrypt any chunk on its own, so a whole file or any byte range streams chunk by chunk.
 */
import { deriveKeys, openChunk, type PrvKeys, verifyHeader } from "./prv_crypto.ts";
import { collectYoungGarbage } from "./gc_hint.ts";
import { bytesSource, fileSource, type PrvSource } from "./prv_source.ts";
import {
  CHUNK_SIZE,
  chunksForRange,
  type ChunkSpan,
  chunkSpan,
  HEADER_SIZE,
  layoutForPrvSize,
  parseHeader,
  type PrvHeader,
  type PrvLayout,
  TAG_SIZE,
} from "./prv_format.ts";

/** The longest run of chunks `stream()` reads at once (1 MiB of plaintext). */
export const MAX_RUN_CHUNKS = 16;
/** Runs `stream()` keeps in flight (the one being delivered and the next). */
export const RUNS_AHEAD = 2;
/** Chunks between two young-garbage collections while streaming (4 MiB; see gc_hint.ts). */
export const GC_HINT_CHUNKS = 64;

/** A plaintext range `[start, end)` (Blob.slice style: HTTP `bytes=a-b` is `{a, b + 1}`). */
export interface PlainRange {
  readonly start?: number;
  readonly end?: number;
}

/** An opened, authenticated `.prv`. Every failure is a PrvError (or RangeError for bad ranges). */
export interface PrvReader extends AsyncDisposable {
  readonly header: PrvHeader;
  /** The plaintext length, authenticated by the final chunk at open (for `Content-Length`). */
  readonly plaintextLength: number;
  readonly chunkCount: number;
  /** The plaintext of chunk `index`. */
  decryptChunk(index: number): Promise<Uint8Array>;
  /**
   * The plaintext of `range` (default: all of it) in parts of at most one chunk, decrypted as
   * the consumer pulls: runs of 1, 2, 4, … 16 chunks read at once, two runs in flight (at most
   * about 4 MiB held). Only the chunks the range touches are read.
   */
  stream(range?: PlainRange): ReadableStream<Uint8Array>;
  /** The plaintext `[start, end)` as one array (meant for small ranges). */
  read(start: number, end: number): Promise<Uint8Array>;
  /** Closes the file when the reader opened it itself (openPrvFile); otherwise nothing. */
  close(): void;
}

class Reader implements PrvReader {
  readonly plaintextLength: number;
  readonly chunkCount: number;
  #final?: Uint8Array;

  constructor(
    readonly header: PrvHeader,
    private readonly keys: PrvKeys,
    private readonly layout: PrvLayout,
    private readonly source: PrvSource,
    private release?: () => void,
  ) {
    this.plaintextLength = layout.plaintextLength;
    this.chunkCount = layout.chunkCount;
  }

  async decryptChunk(index: number): Promise<Uint8Array> {
    const span: ChunkSpan = chunkSpan(this.layout, index);
    if (span.last && this.#final) return this.#final.slice(); // a copy: callers own what they get
    const sealed = await this.source.readAt(span.offset, span.length);
    const place = {
      header: this.header.bytes,
      noncePrefix: this.header.noncePrefix,
      index,
      last: span.last,
    };
    const plain = await openChunk(this.keys, place, sealed, this.chunkCount);
    if (span.last) this.#final = plain.slice();
    return plain;
  }

  /**
   * Chunks `first .. first + count - 1` read at once (into `buffer` when given); resolves when
   * read, to one decryption per chunk (each may reject on its own, so the chunks before a
   * damaged one stay usable).
   */
  async decryptRun(
    first: number,
    count: number,
    buffer?: Uint8Array,
  ): Promise<Promise<Uint8Array>[]> {
    if (count === 1) {
      const plain = this.decryptChunk(first);
      plain.catch(() => {}); // awaited later by the consumer; never an unhandled rejection
      return [plain];
    }
    const from = chunkSpan(this.layout, first);
    const to = chunkSpan(this.layout, first + count - 1);
    const length = to.offset + to.length - from.offset;
    // WebCrypto copies its input when called: `buffer` is free again once every decryption
    // returned here has settled.
    const sealed = await this.source.readAt(from.offset, length, buffer);
    const opens: Promise<Uint8Array>[] = [];
    let previous: Promise<unknown> = Promise.resolve();
    for (let i = first; i < first + count; i++) {
      const span = chunkSpan(this.layout, i);
      const at = span.offset - from.offset;
      const place = {
        header: this.header.bytes,
        noncePrefix: this.header.noncePrefix,
        index: i,
        last: span.last,
      };
      // One after another within a run: two runs in flight make two decryptions at once,
      // which is as fast as more here and keeps WebCrypto's per-call buffers few.
      const plain = previous.then(() =>
        openChunk(this.keys, place, sealed.subarray(at, at + span.length), this.chunkCount)
      );
      previous = plain;
      plain.catch(() => {}); // the consumer awaits them in order and may stop at a failure
      opens.push(plain);
    }
    return opens;
  }

  stream(range: PlainRange = {}): ReadableStream<Uint8Array> {
    const start = range.start ?? 0;
    const end = range.end ?? this.plaintextLength;
    const chunks = chunksForRange(this.layout, start, end);
    if (!chunks) return new ReadableStream({ start: (c) => c.close() });
    const [first, last] = chunks;
    // Runs of 1, 2, 4, … MAX_RUN_CHUNKS chunks, RUNS_AHEAD of them in flight: chunk 0 comes
    // after one chunk's work (the sniff, the first byte), the rest with few, large reads.
    const runs: { first: number; parts: Promise<Promise<Uint8Array>[]> }[] = [];
    let next = first;
    let runLength = 1;
    let failure: unknown; // a damaged chunk after good ones of its run: reported on the next pull
    // One read buffer per run in flight, reused: run k reads into buffers[k % RUNS_AHEAD], and
    // run k + RUNS_AHEAD starts only after pull() has awaited every chunk of run k.
    const buffers = Array.from({ length: RUNS_AHEAD }, () => new Uint8Array(0));
    let runNo = 0;
    let delivered = 0;
    const fill = () => {
      while (runs.length < RUNS_AHEAD && next <= last) {
        const count = Math.min(runLength, last - next + 1);
        const slot = runNo++ % RUNS_AHEAD;
        const need = count * (CHUNK_SIZE + TAG_SIZE);
        if (buffers[slot].byteLength < need) buffers[slot] = new Uint8Array(need);
        const parts = this.decryptRun(next, count, buffers[slot]);
        parts.catch(() => {}); // awaited in order by pull(); never an unhandled rejection
        runs.push({ first: next, parts });
        next += count;
        runLength = Math.min(2 * runLength, MAX_RUN_CHUNKS);
      }
    };
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (failure !== undefined) throw failure;
        fill();
        const run = runs.shift()!;
        const parts = await run.parts;
        for (let k = 0; k < parts.length; k++) {
          let plain: Uint8Array;
          try {
            plain = await parts[k];
          } catch (err) {
            if (k === 0) throw err;
            failure = err;
            return;
          }
          const index = run.first + k;
          const chunkStart = index * CHUNK_SIZE;
          const from = index === first ? start - chunkStart : 0;
          const to = index === last ? end - chunkStart : plain.byteLength;
          controller.enqueue(plain.subarray(from, to));
          if (index === last) controller.close();
          if (++delivered % GC_HINT_CHUNKS === 0) collectYoungGarbage();
        }
        fill(); // only now: the next run may reuse this run's read buffer
      },
      cancel: () => {
        next = last + 1;
        runs.length = 0;
      },
    }, { highWaterMark: 0 });
  }

  async read(start: number, end: number): Promise<Uint8Array> {
    const out = new Uint8Array(end - start);
    let at = 0;
    for await (const part of this.stream({ start, end })) {
      out.set(part, at);
      at += part.byteLength;
    }
    return out;
  }

  close(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.close();
    return Promise.resolve();
  }
}

/**
 * Opens the `.prv` in `source` (a PrvSource, an opened `Deno.FsFile`, or bytes) with content key
 * `cek`: checks magic, version and header, the header MAC (wrong key), the size, and the final
 * chunk (so the length is authentic). Throws PrvError. The source stays the caller's (`close()`
 * does nothing); a file's size is taken now.
 */
export async function openPrv(
  source: PrvSource | Deno.FsFile | Uint8Array,
  cek: Uint8Array,
): Promise<PrvReader> {
  const src = source instanceof Uint8Array
    ? bytesSource(source)
    : source instanceof Deno.FsFile
    ? await fileSource(source)
    : source;
  return await open(src, cek);
}

async function open(source: PrvSource, cek: Uint8Array, release?: () => void): Promise<Reader> {
  const header = parseHeader(await source.readAt(0, Math.min(source.size, HEADER_SIZE)));
  const keys = await deriveKeys(cek, header.salt);
  await verifyHeader(keys, header.bytes);
  const layout = layoutForPrvSize(source.size);
  const reader = new Reader(header, keys, layout, source, release);
  await reader.decryptChunk(layout.chunkCount - 1);
  return reader;
}

/**
 * Opens the `.prv` file at `path` with `cek` (see openPrv); `close()` (or `await using`) closes
 * the file, which is also closed when opening fails.
 */
export async function openPrvFile(path: string, cek: Uint8Array): Promise<PrvReader> {
  const file = await Deno.open(path, { read: true });
  try {
    return await open(await fileSource(file), cek, () => file.close());
  } catch (err) {
    file.close();
    throw err;
  }
}
