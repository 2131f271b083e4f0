/**
 * Streaming `.prv` encryption (docs/prv-format.md, Writing): a fresh CEK per file, a few 64 KiB
 * chunks in flight, SHA-256 of the plaintext and of the output on the way, atomic file output.
 */
import { createHash } from "node:crypto";
import { writeAll, writeFileAtomically } from "./atomic_file.ts";
import { fillReaderOf, type PlaintextSource } from "./plaintext_source.ts";
import { deriveKeys, newCek, sealChunk, signHeader } from "./prv_crypto.ts";
import { PrvSourceError } from "./prv_errors.ts";
import {
  CHUNK_SIZE,
  chunkSpan,
  encodeHeader,
  FILE_UID_SIZE,
  layoutForPlaintext,
  NONCE_PREFIX_SIZE,
  SALT_SIZE,
} from "./prv_format.ts";
import { concatBytes } from "../bytes.ts";

/**
 * Chunks read, sealed and written as one batch (1 MiB): one read, one hash update and one write
 * per batch instead of per chunk. The next batch is read while one is sealed and the one before
 * is written, so at most three batches (a few MiB) are held, whatever the file size.
 */
export const DEFAULT_BATCH_CHUNKS = 16;

/** What an encryption produced (hashes are lower-case hex SHA-256). */
export interface PrvEncryption {
  /** The file's content key: the caller splits it (CEK = S1 xor S2) and must not log it. */
  readonly cek: Uint8Array;
  /** The header's random file id, hex. */
  readonly fileUid: string;
  readonly plaintextSha256: string;
  /** SHA-256 of the whole `.prv` (header and chunks). */
  readonly prvSha256: string;
  readonly plaintextSize: number;
  readonly prvSize: number;
}

/** An encryption written to a file. */
export interface PrvFileEncryption extends PrvEncryption {
  readonly path: string;
}

/** Options of the encryption. */
export interface PrvEncryptOptions {
  /** Chunks per batch (default DEFAULT_BATCH_CHUNKS, at least 1). */
  readonly batchChunks?: number;
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** The `.prv` path for a plaintext path: the same path with `.prv` appended (SPEC). */
export function prvPathFor(plaintextPath: string): string {
  return `${plaintextPath}.prv`;
}

/** Joins sealed chunks into one buffer (a single write and hash update). */
function join(parts: Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0] : concatBytes(parts);
}

/**
 * Encrypts exactly `size` bytes of `source` as a `.prv`, handing the output to `sink` in order
 * (the header, then one buffer per batch of chunks; the next batch is read while the sink takes
 * one, and a slow sink slows the reading). Throws PrvSourceError when the source ends before `size` bytes or has more; a stream
 * source is cancelled on any failure.
 */
export async function encryptPrv(
  source: PlaintextSource,
  size: number,
  sink: (bytes: Uint8Array) => Promise<void>,
  options: PrvEncryptOptions = {},
): Promise<PrvEncryption> {
  const layout = layoutForPlaintext(size);
  const batch = Math.max(1, options.batchChunks ?? DEFAULT_BATCH_CHUNKS);
  const reader = fillReaderOf(source);
  const cek = newCek();
  const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));
  const fields = {
    fileUid: random(FILE_UID_SIZE),
    salt: random(SALT_SIZE),
    noncePrefix: random(NONCE_PREFIX_SIZE),
  };
  const header = encodeHeader(fields);
  const plainHash = createHash("sha256");
  const prvHash = createHash("sha256");
  const emit = async (bytes: Uint8Array) => {
    prvHash.update(bytes);
    await sink(bytes);
  };
  let sealing: Promise<Uint8Array[]> | undefined; // the previous batch, still being sealed
  let writing: Promise<void> = Promise.resolve(); // the batch before it, being written
  /** Hands a sealed batch to the sink after the one before it, without waiting for it. */
  const writeBehind = async (batch: Promise<Uint8Array[]>) => {
    const bytes = join(await batch);
    await writing;
    writing = emit(bytes);
    writing.catch(() => {}); // awaited before the next write and at the end
  };
  try {
    const keys = await deriveKeys(cek, fields.salt);
    await signHeader(keys, header);
    await emit(header);
    for (let first = 0; first < layout.chunkCount; first += batch) {
      const count = Math.min(batch, layout.chunkCount - first);
      const start = first * CHUNK_SIZE;
      const plain = new Uint8Array(Math.min(size - start, count * CHUNK_SIZE));
      const got = await reader.fill(plain);
      if (got < plain.byteLength) {
        throw new PrvSourceError(
          `the source ended after ${start + got} of ${size} bytes ` +
            `(the file changed after it was checked)`,
        );
      }
      const seals: Promise<Uint8Array>[] = [];
      for (let i = first; i < first + count; i++) {
        const span = chunkSpan(layout, i);
        const at = span.plainStart - start;
        const place = { header, noncePrefix: fields.noncePrefix, index: i, last: span.last };
        seals.push(sealChunk(keys, place, plain.subarray(at, at + span.plainLength)));
      }
      plainHash.update(plain); // while the thread pool seals the batch
      const previous = sealing;
      sealing = Promise.all(seals);
      sealing.catch(() => {}); // awaited in order; never an unhandled rejection
      if (previous) await writeBehind(previous);
    }
    if (sealing) await writeBehind(sealing);
    await writing;
    if (await reader.fill(new Uint8Array(1)) > 0) {
      throw new PrvSourceError(
        `the source has more than the ${size} bytes expected (the file changed after it was checked)`,
      );
    }
  } catch (err) {
    await writing.catch(() => {});
    await reader.cancel(err);
    throw err;
  }
  return {
    cek,
    fileUid: hex(fields.fileUid),
    plaintextSha256: plainHash.digest("hex"),
    prvSha256: prvHash.digest("hex"),
    plaintextSize: size,
    prvSize: layout.prvSize,
  };
}

/**
 * Encrypts exactly `size` bytes of an opened `source` into the file `destPath` (normally
 * `prvPathFor(plaintextPath)`), atomically: a failure or a crash leaves no file, and no partial
 * one, under `destPath` (an existing file there is replaced only on success). The caller opened
 * the source (after its checks) and closes it.
 */
export async function encryptToPrv(
  source: PlaintextSource,
  size: number,
  destPath: string,
  options: PrvEncryptOptions = {},
): Promise<PrvFileEncryption> {
  try {
    const result = await writeFileAtomically(
      destPath,
      (file) => encryptPrv(source, size, (bytes) => writeAll(file, bytes), options),
    );
    return { ...result, path: destPath };
  } catch (err) {
    // The output could not even be created: release a stream source that was never read.
    if (source instanceof ReadableStream && !source.locked) {
      await source.cancel(err).catch(() => {});
    }
    throw err;
  }
}
