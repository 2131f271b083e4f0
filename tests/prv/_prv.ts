/** Shared helpers of the `.prv` tests: plaintext generators and in-memory encryption. */
import { encryptPrv, type PrvEncryption } from "../../src/prv/prv_encrypt.ts";
import { CHUNK_SIZE } from "../../src/prv/prv_format.ts";

/** `n` random bytes (crypto.getRandomValues fills at most 64 KiB per call). */
export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(out.subarray(at, at + 65536));
  return out;
}

/** A stream of `bytes` in pieces of `piece` bytes (not aligned to chunks on purpose). */
export function streamOf(bytes: Uint8Array, piece = 10_000): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.byteLength) return c.close();
      c.enqueue(bytes.slice(at, at + piece));
      at += piece;
    },
  }, { highWaterMark: 0 });
}

/** Encrypts `plain` in memory; returns the `.prv` bytes and the result. */
export async function encryptBytes(
  plain: Uint8Array,
): Promise<{ prv: Uint8Array; enc: PrvEncryption }> {
  const parts: Uint8Array[] = [];
  const enc = await encryptPrv(streamOf(plain), plain.byteLength, (b) => {
    parts.push(b);
    return Promise.resolve();
  });
  const prv = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    prv.set(p, at);
    at += p.byteLength;
  }
  return { prv, enc };
}

/**
 * A lazily generated plaintext of `size` bytes (nothing held beyond one piece): each 64 KiB
 * block is `block` with the block number in its first 4 bytes. `pulled()` counts bytes handed
 * out so far.
 */
export function generatedStream(
  size: number,
  block: Uint8Array = randomBytes(CHUNK_SIZE),
  piece = 16_384,
): { stream: ReadableStream<Uint8Array>; pulled(): number } {
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= size) return c.close();
      const n = Math.min(piece, size - at);
      c.enqueue(generatedSlice(block, at, n));
      at += n;
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => at };
}

/** Bytes `[at, at + n)` of the generated plaintext of `generatedStream`. */
export function generatedSlice(block: Uint8Array, at: number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n;) {
    const pos = at + i;
    const blockNo = Math.floor(pos / CHUNK_SIZE);
    const off = pos % CHUNK_SIZE;
    const len = Math.min(n - i, CHUNK_SIZE - off);
    const b = block.slice();
    new DataView(b.buffer).setUint32(0, blockNo);
    out.set(b.subarray(off, off + len), i);
    i += len;
  }
  return out;
}

/** Lower-case hex SHA-256 of bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return Array.from(d, (x) => x.toString(16).padStart(2, "0")).join("");
}
