/**
 * Reading a `.prv` (docs/prv-format.md, Reading): check the header and the final chunk at open,
 * then decrypt any chunk on its own, so a whole file or any byte range streams chunk by chunk.
 */
import { deriveKeys, openChunk, type PrvKeys, verifyHeader } from "./prv_crypto.ts";
import { PRV_GC_HINT } from "./gc_hint.ts";
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

/** The run of chunks `stream()` reads at once after the first chunk (1 MiB of plaintext). */
export const MAX_RUN_CHUNKS = 16;
/** Runs `stream()` keeps in flight (the one being delivered and the next). */
export const RUNS_AHEAD = 2;
/**
 * Chunk decryptions `stream()` keeps in flight: WebCrypto runs them on its thread pool, so a
 * few at once use every core; more only add threads and buffers.
 */
export const DECRYPTS_IN_FLIGHT = 4;

/** A plaintext range `[start, end)` (Blob.slice style: HTTP `bytes=a-b` is `{a, b + 1}`). */
export interface PlainRange {
  readonly start?: number;
  readonly end?: number;
}

/** Options of `PrvReader.stream()`. */
export interface StreamOptions {
  /** Errors the stream with the signal's reason when it aborts (and stops reading ahead). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Called once when the stream is over: with the bytes it delivered, and `complete` true when
   * it was read to its end (false: cancelled, aborted or failed).
   */
  readonly onEnd?: (bytes: number, complete: boolean) => void;
}

/**
 * What opening a `.prv` established (its header passed the MAC under `keys`, its final chunk
 * authenticated): `reopenPrv` reuses it for the same unchanged file and key without reading or
 * checking either again. The keys are non-extractable.
 */
export interface VerifiedPrv {
  readonly header: PrvHeader;
  readonly keys: PrvKeys;
}

/** An opened, authenticated `.prv`. Every failure is a PrvError (or RangeError for bad ranges). */
export interface PrvReader extends AsyncDisposable {
  readonly header: PrvHeader;
  /** The header and keys this open verified (for `reopenPrv`). */
  readonly verified: VerifiedPrv;
  /** The plaintext length, authenticated by the final chunk at open (for `Content-Length`). */
  readonly plaintextLength: number;
  readonly chunkCount: number;
  /** The plaintext of chunk `index`. */
  decryptChunk(index: number): Promise<Uint8Array>;
  /**
   * The plaintext of `range` (default: all of it) in parts of at most one chunk, decrypted as
   * the consumer pulls: its first chunk read and decrypted alone (the first byte, a type sniff),
   * then runs of 16 chunks read at once, two runs in flight and four chunks decrypting at once
   * (at most about 4 MiB held). Only the chunks the range touches are read. `options`: an abort
   * signal that errors it, and a callback when it ends.
   */
  stream(range?: PlainRange, options?: StreamOptions): ReadableStream<Uint8Array>;
  /** The plaintext `[start, end)` as one array (meant for small ranges). */
  read(start: number, end: number): Promise<Uint8Array>;
  /** Closes the file when the reader opened it itself (openPrvFile); otherwise nothing. */
  close(): void;
}

/** Lets at most `limit` decryptions run at once, started in the order they were asked for. */
class DecryptGate {
  #slots: Promise<unknown>[];
  #next = 0;
  constructor(limit: number) {
    this.#slots = Array.from({ length: limit }, () => Promise.resolve());
  }

  /** Runs `task` once the decryption `limit` places before it has settled. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const k = this.#next++ % this.#slots.length;
    const result = this.#slots[k].then(task);
    this.#slots[k] = result.catch(() => {});
    return result;
  }
}

class Reader implements PrvReader {
  readonly plaintextLength: number;
  readonly chunkCount: number;
  #final?: Uint8Array;
  /** Chunk 0's plaintext, decrypted at open (openPrvWithHead), for the first run that needs it. */
  #first: Uint8Array | undefined;

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

  get verified(): VerifiedPrv {
    return { header: this.header, keys: this.keys };
  }

  async decryptChunk(index: number): Promise<Uint8Array> {
    const span: ChunkSpan = chunkSpan(this.layout, index);
    if (span.last && this.#final) return this.#final.slice(); // a copy: callers own what they get
    return await this.#open(span, await this.source.readAt(span.offset, span.length));
  }

  /** Verifies the final chunk at open (its plaintext is kept: the length is now authentic). */
  async openFinal(span: ChunkSpan, sealed: Uint8Array): Promise<void> {
    this.#final = (await this.#open(span, sealed)).slice();
  }

  /** Decrypts chunk 0 (not the final one) at open; the plaintext goes to the first run from 0. */
  openFirst(sealed: Uint8Array): Promise<Uint8Array> {
    return this.#open(chunkSpan(this.layout, 0), sealed);
  }

  /** Keeps chunk 0's plaintext (from openFirst) for the next run that starts with chunk 0. */
  keepFirst(plain: Uint8Array): void {
    this.#first = plain;
  }

  /** Decrypts the chunk at `span` from its bytes `sealed`. */
  async #open(span: ChunkSpan, sealed: Uint8Array): Promise<Uint8Array> {
    const place = {
      header: this.header.bytes,
      noncePrefix: this.header.noncePrefix,
      index: span.index,
      last: span.last,
    };
    return await openChunk(this.keys, place, sealed, this.chunkCount);
  }

  /**
   * Chunks `first .. first + count - 1` read at once (into `buffer` when given); resolves when
   * read, to one decryption per chunk, each started when `gate` lets it (each may reject on
   * its own, so the chunks before a damaged one stay usable; none is ever left unhandled).
   */
  async decryptRun(
    first: number,
    count: number,
    buffer?: Uint8Array,
    gate: DecryptGate = new DecryptGate(1),
  ): Promise<Promise<Uint8Array>[]> {
    // The final chunk was verified at open: it is neither read nor decrypted again. Chunk 0,
    // when decrypted at open, is handed over once (the reader keeps no copy).
    const final = first + count === this.chunkCount ? this.#final : undefined;
    const head = first === 0 ? this.#first : undefined;
    if (head) this.#first = undefined;
    const readFirst = head ? first + 1 : first;
    const toRead = (final ? count - 1 : count) - (head ? 1 : 0);
    const from = chunkSpan(this.layout, Math.min(readFirst, this.chunkCount - 1));
    let sealed: Uint8Array = new Uint8Array(0);
    if (toRead > 0) {
      const to = chunkSpan(this.layout, readFirst + toRead - 1);
      // WebCrypto copies its input when called: `buffer` is free again once every decryption
      // returned here has started (the stream reuses it only after they have all settled).
      sealed = await this.source.readAt(from.offset, to.offset + to.length - from.offset, buffer);
    }
    const opens: Promise<Uint8Array>[] = [];
    for (let i = first; i < first + count; i++) {
      const span = chunkSpan(this.layout, i);
      const at = span.offset - from.offset;
      const plain = head && i === 0
        ? Promise.resolve(head)
        : final && span.last
        ? Promise.resolve(final.slice()) // a copy: callers own what they get
        : gate.run(() => this.#open(span, sealed.subarray(at, at + span.length)));
      plain.catch(() => {}); // the consumer awaits them in order and may stop at a failure
      opens.push(plain);
    }
    return opens;
  }

  stream(range: PlainRange = {}, options: StreamOptions = {}): ReadableStream<Uint8Array> {
    const start = range.start ?? 0;
    const end = range.end ?? this.plaintextLength;
    const { signal, onEnd } = options;
    let sent = 0;
    let ended = false;
    let stopAbort = () => {};
    const finish = (complete: boolean) => {
      if (ended) return;
      ended = true;
      stopAbort();
      onEnd?.(sent, complete);
    };
    const chunks = chunksForRange(this.layout, start, end);
    if (!chunks) {
      return new ReadableStream({
        start: (c) => {
          if (signal?.aborted) c.error(signal.reason);
          else c.close();
          finish(!signal?.aborted);
        },
      });
    }
    const [first, last] = chunks;
    // The first chunk alone (the first byte, the sniff), then runs of MAX_RUN_CHUNKS, RUNS_AHEAD
    // of them in flight, their chunks decrypting DECRYPTS_IN_FLIGHT at a time.
    const runs: { first: number; parts: Promise<Promise<Uint8Array>[]> }[] = [];
    const gate = new DecryptGate(DECRYPTS_IN_FLIGHT);
    let next = first;
    let runLength = 1;
    let failure: unknown; // a damaged chunk after good ones of its run: reported on the next pull
    // One read buffer per run in flight, reused: run k reads into buffers[k % RUNS_AHEAD], and
    // run k + RUNS_AHEAD starts only after pull() has awaited every chunk of run k.
    const buffers = Array.from({ length: RUNS_AHEAD }, () => new Uint8Array(0));
    let runNo = 0;
    const fill = () => {
      while (runs.length < RUNS_AHEAD && next <= last) {
        const count = Math.min(runLength, last - next + 1);
        const slot = runNo++ % RUNS_AHEAD;
        const need = count * (CHUNK_SIZE + TAG_SIZE);
        if (buffers[slot].byteLength < need) buffers[slot] = new Uint8Array(need);
        const parts = this.decryptRun(next, count, buffers[slot], gate);
        parts.catch(() => {}); // awaited in order by pull(); never an unhandled rejection
        runs.push({ first: next, parts });
        next += count;
        runLength = MAX_RUN_CHUNKS;
      }
    };
    const stop = () => {
      next = last + 1;
      runs.length = 0;
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        if (signal === undefined) return;
        const abort = () => {
          stop();
          controller.error(signal.reason);
          finish(false);
        };
        if (signal.aborted) return abort();
        signal.addEventListener("abort", abort, { once: true });
        stopAbort = () => signal.removeEventListener("abort", abort);
      },
      pull: async (controller) => {
        try {
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
            if (ended) return; // aborted meanwhile: the stream has errored already
            const index = run.first + k;
            const chunkStart = index * CHUNK_SIZE;
            const from = index === first ? start - chunkStart : 0;
            const to = index === last ? end - chunkStart : plain.byteLength;
            controller.enqueue(plain.subarray(from, to));
            sent += to - from;
            if (index === last) {
              controller.close();
              finish(true);
            }
            PRV_GC_HINT.note();
          }
          fill(); // only now: the next run may reuse this run's read buffer
        } catch (err) {
          if (ended) return;
          finish(false);
          throw err;
        }
      },
      cancel: () => {
        stop();
        finish(false);
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
    this.#first?.fill(0); // chunk 0 decrypted at open and never streamed
    this.#first = undefined;
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
  return (await open(src, cek)).reader;
}

/**
 * A reader over `source` from what an earlier open of the same, unchanged file with the same key
 * verified (`reader.verified`): nothing is read or checked now (the final chunk is decrypted
 * when it is streamed, like any other). Every chunk is still authenticated as it is decrypted,
 * against the verified header. PrvError when the size is no `.prv` size; `release` runs on
 * `close()`.
 */
export function reopenPrv(
  source: PrvSource,
  verified: VerifiedPrv,
  release?: () => void,
): PrvReader {
  return new Reader(
    verified.header,
    verified.keys,
    layoutForPrvSize(source.size),
    source,
    release,
  );
}

async function open(
  source: PrvSource,
  cek: Uint8Array,
  release?: () => void,
  withFirst = false,
): Promise<{ reader: Reader; first: Uint8Array | undefined }> {
  // With `withFirst`, chunk 0 (when it is not the final chunk) is read with the header.
  const firstEnd = HEADER_SIZE + CHUNK_SIZE + TAG_SIZE;
  const start = await source.readAt(
    0,
    Math.min(source.size, withFirst && source.size > firstEnd ? firstEnd : HEADER_SIZE),
  );
  const header = parseHeader(start.subarray(0, HEADER_SIZE));
  // The final chunk is read while the keys are derived; the checks still fail in the
  // documented order (header MAC, then size, then the final chunk).
  let layout: PrvLayout | undefined;
  let sizeError: unknown;
  try {
    layout = layoutForPrvSize(source.size);
  } catch (err) {
    sizeError = err;
  }
  const finalSpan = layout && chunkSpan(layout, layout.chunkCount - 1);
  const finalBytes = finalSpan && source.readAt(finalSpan.offset, finalSpan.length);
  finalBytes?.catch(() => {}); // awaited below unless an earlier check fails
  const keys = await deriveKeys(cek, header.salt);
  const verified = verifyHeader(keys, header.bytes);
  if (!layout || !finalSpan || !finalBytes) {
    await verified;
    throw sizeError;
  }
  // The final chunk decrypts while the MAC is checked (nothing is released before both pass);
  // a failed MAC is reported first, whatever the chunk did.
  const reader = new Reader(header, keys, layout, source, release);
  const final = finalBytes.then((bytes) => reader.openFinal(finalSpan, bytes));
  // Chunk 0 decrypts alongside (openPrvWithHead); it too is released only after both checks.
  const first = start.byteLength === firstEnd && layout.chunkCount > 1
    ? reader.openFirst(start.subarray(HEADER_SIZE))
    : undefined;
  const [mac, chunk, zero] = await Promise.allSettled([verified, final, first]);
  const failed = [mac, chunk, zero].find((r) => r.status === "rejected");
  if (failed !== undefined) {
    if (zero.status === "fulfilled") zero.value?.fill(0);
    throw (failed as PromiseRejectedResult).reason;
  }
  return { reader, first: (zero as PromiseFulfilledResult<Uint8Array | undefined>).value };
}

/**
 * Opens the `.prv` file at `path` with `cek` (see openPrv); `close()` (or `await using`) closes
 * the file, which is also closed when opening fails.
 */
export async function openPrvFile(path: string, cek: Uint8Array): Promise<PrvReader> {
  const file = await Deno.open(path, { read: true });
  try {
    return await openPrvSource(await fileSource(file), cek, () => file.close());
  } catch (err) {
    file.close();
    throw err;
  }
}

/** openPrv on `source`, with `release` run by `close()` (not when opening fails). */
export async function openPrvSource(
  source: PrvSource,
  cek: Uint8Array,
  release?: () => void,
): Promise<PrvReader> {
  return (await open(source, cek, release)).reader;
}

/**
 * openPrvSource for a viewer that sniffs the type: chunk 0 is read with the header and decrypted
 * while the header MAC and the final chunk are checked (a damaged chunk 0 fails the open), and
 * `head` is a copy of the plaintext's first `headBytes` bytes. The reader hands chunk 0 to the
 * first stream that starts with it instead of reading and decrypting it again.
 */
export async function openPrvWithHead(
  source: PrvSource,
  cek: Uint8Array,
  headBytes: number,
  release?: () => void,
): Promise<{ reader: PrvReader; head: Uint8Array }> {
  const { reader, first } = await open(source, cek, release, true);
  const n = Math.min(headBytes, reader.plaintextLength);
  if (first === undefined) return { reader, head: await reader.read(0, n) };
  reader.keepFirst(first);
  return { reader, head: first.slice(0, n) };
}
