/**
 * The receiver's partial blob: a file in the blob directory written part by part at each part's
 * offset and synced before the part is recorded, so a crash leaves either a recorded part on disk
 * or an unrecorded one that arrives (or is asked for) again. Also the free-space check and the
 * SHA-256 of a file read in bounded chunks.
 */
import { createHash } from "node:crypto";
import { statfsSync } from "node:fs";

/** File names of partial blobs start with this (never a blob name: blob names are hex). */
export const PARTIAL_PREFIX = ".transfer-";

/** The partial blob's file name of transfer `id` from the key `fingerprint`. */
export function partialName(id: string, fingerprint: string): string {
  return `${PARTIAL_PREFIX}${id}-${fingerprint.slice(0, 16).toLowerCase()}.part`;
}

/** Absolute path of a partial blob. */
export function partialPath(blobDir: string, name: string): string {
  if (!name.startsWith(PARTIAL_PREFIX) || name.includes("/")) {
    throw new Error(`"${name}" is not a partial blob name`);
  }
  return `${blobDir.replace(/\/+$/, "")}/${name}`;
}

/** Writes `data` at `offset` of the file at `path` (created if missing) and syncs it. */
export async function writeAt(path: string, offset: number, data: Uint8Array): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true });
  await f.seek(offset, Deno.SeekMode.Start);
  for (let off = 0; off < data.byteLength;) off += await f.write(data.subarray(off));
  await f.syncData();
}

/** Reads `length` bytes at `offset` (fewer at the end of the file). */
export async function readAt(path: string, offset: number, length: number): Promise<Uint8Array> {
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const buf = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = await f.read(buf.subarray(got));
    if (n === null) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/** Bytes of one read of a file slice. */
const SLICE_CHUNK_BYTES = 256 * 1024;

/** The `length` bytes at `offset` of the file at `path`, in chunks of at most 256 KiB. */
export async function* sliceChunks(
  path: string,
  offset: number,
  length: number,
): AsyncGenerator<Uint8Array> {
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  for (let left = length; left > 0;) {
    const buf = new Uint8Array(Math.min(SLICE_CHUNK_BYTES, left));
    const n = await f.read(buf);
    if (n === null) throw new Error(`${path} ends ${left} bytes before the part does`);
    left -= n;
    yield buf.subarray(0, n);
  }
}

/** SHA-256 (lower-case hex) of a slice of a file, read in chunks. */
export async function sha256Slice(path: string, offset: number, length: number): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of sliceChunks(path, offset, length)) hash.update(chunk);
  return hash.digest("hex");
}

/**
 * Copies the whole file at `from` (a received part's payload) to `offset` of the file at `to`
 * (created if missing) in chunks, and syncs it.
 */
export async function copyInto(from: string, to: string, offset: number): Promise<void> {
  using src = await Deno.open(from, { read: true });
  using dst = await Deno.open(to, { write: true, create: true });
  await dst.seek(offset, Deno.SeekMode.Start);
  const buf = new Uint8Array(SLICE_CHUNK_BYTES);
  for (;;) {
    const n = await src.read(buf);
    if (n === null) break;
    for (let off = 0; off < n;) off += await dst.write(buf.subarray(off, n));
  }
  await dst.syncData();
}

/** SHA-256 (lower-case hex) of bytes. */
export function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** SHA-256 (lower-case hex) of a file, read 1 MiB at a time. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  using f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(1024 * 1024);
  for (;;) {
    const n = await f.read(buf);
    if (n === null) break;
    hash.update(buf.subarray(0, n));
  }
  return hash.digest("hex");
}

/**
 * Bytes free for this process on the file system of `dir` (or of its nearest existing parent),
 * or undefined when unknown (no permission to ask).
 */
export function freeBytes(dir: string): number | undefined {
  for (let d = dir.replace(/\/+$/, "") || "/";; d = d.slice(0, d.lastIndexOf("/")) || "/") {
    try {
      const s = statfsSync(d);
      return Number(s.bavail) * Number(s.bsize);
    } catch (err) {
      if ((err as { code?: string }).code !== "ENOENT" || d === "/") return undefined;
    }
  }
}
