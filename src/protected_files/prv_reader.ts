/**
 * Reading a `.prv` (docs/prv-format.md, Reading): check the header and the final chunk at open,
 * then decrypt any chunk on its own, so a whole file or any byte range streams chunk by chunk.
 */
import { deriveKeys, openChunk, type PrvKeys, verifyHeader } from "./prv_crypto.ts";
import { fileSource, type PrvSource } from "./prv_source.ts";
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
} from "./prv_format.ts";

/** Chunks decrypted ahead of the consumer by `stream()` unless told otherwise. */
export const DEFAULT_READ_AHEAD = 4;

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
   * The plaintext of `range` (default: all of it), decrypted as the consumer pulls, with up
   * to `readAhead` chunks decrypting ahead. Only the chunks the range touches are read.
   */
  stream(range?: PlainRange, readAhead?: number): ReadableStream<Uint8Array>;
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
    if (span.last && this.#final) return this.#final;
    const sealed = await this.source.readAt(span.offset, span.length);
    const place = {
      header: this.header.bytes,
      noncePrefix: this.header.noncePrefix,
      index,
      last: span.last,
    };
    const plain = await openChunk(this.keys, place, sealed, this.chunkCount);
    if (span.last) this.#final = plain;
    return plain;
  }

  stream(range: PlainRange = {}, readAhead = DEFAULT_READ_AHEAD): ReadableStream<Uint8Array> {
    const start = range.start ?? 0;
    const end = range.end ?? this.plaintextLength;
    const chunks = chunksForRange(this.layout, start, end);
    if (!chunks) return new ReadableStream({ start: (c) => c.close() });
    const [first, last] = chunks;
    const ahead = Math.max(1, readAhead);
    const queue: Promise<Uint8Array>[] = [];
    let next = first; // next chunk to start decrypting
    let head = first; // chunk at the front of the queue
    const fill = () => {
      while (queue.length < ahead && next <= last) {
        const p = this.decryptChunk(next++);
        p.catch(() => {}); // awaited in order by pull(); never an unhandled rejection
        queue.push(p);
      }
    };
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        fill();
        const index = head++;
        const plain = await queue.shift()!;
        const chunkStart = index * CHUNK_SIZE;
        const from = index === first ? start - chunkStart : 0;
        const to = index === last ? end - chunkStart : plain.byteLength;
        controller.enqueue(plain.subarray(from, to));
        if (index === last) controller.close();
        else fill();
      },
      cancel: () => {
        next = last + 1;
        queue.length = 0;
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
 * Opens the `.prv` in `source` with content key `cek`: checks magic, version and header, the
 * header MAC (wrong key), the size, and the final chunk (so the length is authentic). Throws
 * PrvError. The source stays the caller's (`close()` does nothing).
 */
export function openPrv(source: PrvSource, cek: Uint8Array): Promise<PrvReader> {
  return open(source, cek);
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
