/**
 * Reads or streams a request body with a byte limit, so a client cannot make the daemon buffer an
 * arbitrarily large upload; the declared `Content-Length` is checked before reading. A body that
 * cannot be read (cut short, bad chunked encoding) is the client's fault: `BodyReadError`.
 */

/**
 * Declared bodies up to this size are read in one call (the runtime may reserve the declared
 * size up front); larger ones in chunks, so a client that declares a large body and sends little
 * makes the daemon hold only what arrived.
 */
export const WHOLE_BODY_MAX_BYTES = 65_536;

/** The request body could not be read: the client closed early or sent broken framing. */
export class BodyReadError extends Error {
  constructor(cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`the request body could not be read (it was cut short or badly framed): ${why}`, {
      cause,
    });
    this.name = "BodyReadError";
  }
}

/** A body that fit, or the size that did not (`atLeast` when the client declared no length). */
export type LimitedBody =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly size: number; readonly atLeast: boolean };

/** A streamed body's outcome: its size, or the size that was over the limit. */
export type StreamedBody =
  | { readonly ok: true; readonly size: number }
  | { readonly ok: false; readonly size: number; readonly atLeast: boolean };

/**
 * Receives the next chunk of a streamed body. The bytes are only valid during the call: the
 * buffer under them is reused for the next chunk, so a handler that keeps them must copy them.
 */
export type BodyChunkHandler = (chunk: Uint8Array) => void;

/** Buffers bodies are read into, kept for the next body once one is done with them. */
class SpareBuffers {
  readonly #spares: ArrayBuffer[] = [];
  constructor(readonly size: number, private readonly keep: number) {}
  take(): ArrayBuffer {
    return this.#spares.pop() ?? new ArrayBuffer(this.size);
  }
  give(buffer: ArrayBuffer): void {
    if (this.#spares.length < this.keep) this.#spares.push(buffer);
  }
}

/**
 * A body is read into a small buffer while it trickles in (so a client that stops sending holds
 * only that while its read waits) and into a large one, the runtime's own chunk size, once a read
 * fills the small one. With 64 KiB for every read, 200 clients stalled mid-body left the native
 * heap 28 MB larger after they went (fragments it does not return); with 4 KiB, 7 MB.
 */
const smallBuffers = new SpareBuffers(4_096, 64);
const largeBuffers = new SpareBuffers(65_536, 8);

/**
 * Streams `req`'s body chunk by chunk to `onChunk` unless it is larger than `limit` bytes (a
 * declared length over it is refused before reading; a streamed body is cut once it passes it).
 * A body from the HTTP server (a byte stream) is read into reused buffers ("bring your own
 * buffer": `smallBuffers`, `largeBuffers`), so reading allocates nothing per chunk: otherwise the
 * runtime allocates a fresh 64 KiB buffer per chunk, which lives outside the JS heap until the
 * next full garbage collection and, 32 bodies at a time, grew the daemon's native heap for good
 * (BENCHMARKS.md "Hostile load"). Rejects with `BodyReadError` when the body cannot be read.
 */
export async function streamLimitedBody(
  req: Request,
  limit: number,
  onChunk: BodyChunkHandler,
): Promise<StreamedBody> {
  try {
    return await streamBody(req, limit, onChunk);
  } catch (err) {
    throw err instanceof BodyReadError ? err : new BodyReadError(err);
  }
}

async function streamBody(
  req: Request,
  limit: number,
  onChunk: BodyChunkHandler,
): Promise<StreamedBody> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await req.body?.cancel().catch(() => {});
    return { ok: false, size: declared, atLeast: false };
  }
  if (req.body === null) return { ok: true, size: 0 };
  const reader = byobReader(req.body);
  return reader === undefined
    ? await streamChunks(req.body.getReader(), limit, onChunk)
    : await streamIntoBuffer(reader, limit, onChunk);
}

/** A reader that fills the caller's buffer, or undefined when `body` is not a byte stream. */
function byobReader(body: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | undefined {
  try {
    return body.getReader({ mode: "byob" });
  } catch {
    return undefined; // a stream of chunks (a Request built in-process): read as it comes
  }
}

async function streamIntoBuffer(
  reader: ReadableStreamBYOBReader,
  limit: number,
  onChunk: BodyChunkHandler,
): Promise<StreamedBody> {
  // Each read hands its buffer to the stream and gets it back in `value`; a read that fails keeps
  // it, so only the buffers of a body that ends normally go back to the spares.
  let small = smallBuffers.take();
  let large: ArrayBuffer | undefined;
  let flowing = false; // the last read filled the small buffer: read into the large one
  let total = 0;
  for (;;) {
    const buffer: ArrayBuffer = flowing ? (large ??= largeBuffers.take()) : small;
    const { value, done } = await reader.read(new Uint8Array(buffer));
    if (value === undefined) throw new Error("the body stream was cancelled while being read");
    if (flowing) large = value.buffer as ArrayBuffer;
    else small = value.buffer as ArrayBuffer;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      break;
    }
    onChunk(value);
    flowing = value.byteLength >= small.byteLength;
    if (!flowing && large !== undefined) {
      largeBuffers.give(large); // trickling again: do not hold the large one while waiting
      large = undefined;
    }
  }
  smallBuffers.give(small);
  if (large !== undefined) largeBuffers.give(large);
  return total > limit ? { ok: false, size: total, atLeast: true } : { ok: true, size: total };
}

async function streamChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
  onChunk: BodyChunkHandler,
): Promise<StreamedBody> {
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { ok: true, size: total };
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false, size: total, atLeast: true };
    }
    onChunk(value);
  }
}

/**
 * Reads `req`'s body into memory unless it is larger than `limit` bytes; rejects with
 * `BodyReadError` when the body cannot be read.
 */
export async function readLimitedBody(req: Request, limit: number): Promise<LimitedBody> {
  // Fast path: a small declared length (the HTTP server enforces that the body matches it),
  // read in one call. It must not touch `req.body` first: that getter builds a
  // ReadableStream and halves /rpc throughput (bench/, BENCHMARKS.md).
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared <= Math.min(limit, WHOLE_BODY_MAX_BYTES)) {
    try {
      return { ok: true, bytes: await req.bytes() };
    } catch (err) {
      throw new BodyReadError(err);
    }
  }
  const chunks: Uint8Array[] = [];
  const body = await streamLimitedBody(req, limit, (chunk) => chunks.push(chunk.slice()));
  if (!body.ok) return body;
  const bytes = new Uint8Array(body.size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, bytes };
}

/** The "N bytes" part of a too-large message. */
export function describeSize(body: { size: number; atLeast: boolean }): string {
  return body.atLeast ? `at least ${body.size} bytes` : `${body.size} bytes`;
}
