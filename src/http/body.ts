/**
 * Reads a request body with a byte limit, so a client cannot make the daemon buffer an
 * arbitrarily large upload; the declared `Content-Length` is checked before reading.
 */

/** A body that fit, or the size that did not (`atLeast` when the client declared no length). */
export type LimitedBody =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly size: number; readonly atLeast: boolean };

/** Reads `req`'s body into memory unless it is larger than `limit` bytes. */
export async function readLimitedBody(req: Request, limit: number): Promise<LimitedBody> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await req.body?.cancel().catch(() => {});
    return { ok: false, size: declared, atLeast: false };
  }
  // Fast path: a declared length within the limit (the HTTP server enforces that the body
  // matches it), read in one call. It must not touch `req.body` first: that getter builds a
  // ReadableStream and halves /rpc throughput (bench/, BENCHMARKS.md).
  if (Number.isFinite(declared)) {
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
