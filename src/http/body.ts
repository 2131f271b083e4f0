/**
 * Reads a request body with a byte limit, so a client cannot make the daemon buffer an
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

/**
 * Reads `req`'s body into memory unless it is larger than `limit` bytes; rejects with
 * `BodyReadError` when the body cannot be read.
 */
export async function readLimitedBody(req: Request, limit: number): Promise<LimitedBody> {
  try {
    return await readBody(req, limit);
  } catch (err) {
    throw err instanceof BodyReadError ? err : new BodyReadError(err);
  }
}

async function readBody(req: Request, limit: number): Promise<LimitedBody> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await req.body?.cancel().catch(() => {});
    return { ok: false, size: declared, atLeast: false };
  }
  // Fast path: a small declared length (the HTTP server enforces that the body matches it),
  // read in one call. It must not touch `req.body` first: that getter builds a
  // ReadableStream and halves /rpc throughput (bench/, BENCHMARKS.md).
  if (Number.isFinite(declared) && declared <= WHOLE_BODY_MAX_BYTES) {
    return { ok: true, bytes: await req.bytes() };
  }
  if (req.body === null) return { ok: true, bytes: new Uint8Array(0) };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false, size: total, atLeast: true };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
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
