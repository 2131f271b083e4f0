/**
 * Streaming `.prv` encryption (docs/prv-format.md, Writing): a fresh CEK per file, batches of
 * 64 KiB chunks sealed in parallel, both SHA-256 digests beside them, atomic file output.
 */
import { writeFileAtomicallyThen } from "./atomic_file.ts";
import { PRV_GC_HINT } from "./gc_hint.ts";
import { type FillReader, fillReaderOf, type PlaintextSource } from "./plaintext_source.ts";
import { deriveKeys, newCek, type PrvKeys, sealChunk, signHeader } from "./prv_crypto.ts";
import { PrvSourceError } from "./prv_errors.ts";
import {
  CHUNK_SIZE,
  chunkSpan,
  encodeHeader,
  FILE_UID_SIZE,
  layoutForPlaintext,
  NONCE_PREFIX_SIZE,
  type PrvLayout,
  SALT_SIZE,
} from "./prv_format.ts";
import { concatBytes, toHex } from "../bytes.ts";
import {
  type DigestIndex,
  type Sha256Pair,
  sha256PairDeferred,
  sha256PairFor,
} from "./sha256_worker.ts";

/**
 * Chunks read, sealed and written as one batch (1 MiB): one read, one write and one message to
 * the hash worker per batch instead of per chunk; a batch's chunks are sealed in parallel. The
 * next batch is read while one is sealed and the one before is written, so at most three
 * batches (a few MiB) are held, whatever the file size.
 */
export const DEFAULT_BATCH_CHUNKS = 16;
/** Bytes handed to the hash worker and not yet hashed before the reading waits (4 MiB). */
export const HASH_BACKLOG_BYTES = 4 << 20;

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

/**
 * The `.prv` path for a plaintext path: the same path with `.prv` appended (docs/contract.md §2).
 */
export function prvPathFor(plaintextPath: string): string {
  return `${plaintextPath}.prv`;
}

/**
 * Joins sealed chunks into one buffer (a single write and hash update): into `into` when given
 * (a reused buffer of the right size), else a new one.
 */
function join(parts: Uint8Array[], into?: Uint8Array): Uint8Array {
  if (parts.length === 1 && !into) return parts[0];
  if (!into) return concatBytes(parts);
  let at = 0;
  for (const part of parts) {
    into.set(part, at);
    at += part.byteLength;
  }
  return into;
}

/** A file's fresh secrets, header and keys, made before any byte is read. */
interface Prepared {
  readonly cek: Uint8Array;
  readonly fileUid: Uint8Array;
  readonly noncePrefix: Uint8Array;
  /** The header, MAC included. */
  readonly header: Uint8Array;
  readonly keys: PrvKeys;
}

async function prepare(): Promise<Prepared> {
  const cek = newCek();
  const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));
  const fields = {
    fileUid: random(FILE_UID_SIZE),
    salt: random(SALT_SIZE),
    noncePrefix: random(NONCE_PREFIX_SIZE),
  };
  const header = encodeHeader(fields);
  const keys = await deriveKeys(cek, fields.salt);
  await signHeader(keys, header);
  return { cek, fileUid: fields.fileUid, noncePrefix: fields.noncePrefix, header, keys };
}

/** How the output reaches its destination. */
interface Output {
  readonly write: (bytes: Uint8Array) => Promise<void>;
  /** The bytes are free once written (our own file sink): hashed after, without a copy. */
  readonly freeAfterWrite: boolean;
}

/** The source being read: its reader and the first batch's read, started before the rest. */
interface Reading {
  readonly reader: FillReader;
  readonly first: Promise<Uint8Array>;
}

const batchChunksOf = (options: PrvEncryptOptions) =>
  Math.max(1, options.batchChunks ?? DEFAULT_BATCH_CHUNKS);

/**
 * `length` bytes of the source (plaintext from `start`) into `into` (a reused buffer of that
 * size) or a new buffer; short: an error.
 */
async function readBatch(
  reader: FillReader,
  start: number,
  length: number,
  size: number,
  into?: Uint8Array,
): Promise<Uint8Array> {
  const plain = into ?? new Uint8Array(length);
  const got = await reader.fill(plain);
  if (got < length) {
    throw new PrvSourceError(
      `the source ended after ${start + got} of ${size} bytes ` +
        `(the file changed after it was checked)`,
    );
  }
  return plain;
}

/** Throws when the source has a byte after the `size` expected. */
async function expectEnd(reader: FillReader, size: number): Promise<void> {
  if (await reader.fill(new Uint8Array(1)) > 0) {
    throw new PrvSourceError(
      `the source has more than the ${size} bytes expected (the file changed after it was checked)`,
    );
  }
}

/**
 * Starts reading the first batch at once: it needs neither the keys nor the output, so it
 * runs while they are made.
 */
function startReading(source: PlaintextSource, size: number, batch: number): Reading {
  const reader = fillReaderOf(source);
  const first = readBatch(reader, 0, Math.min(size, batch * CHUNK_SIZE), size);
  first.catch(() => {}); // awaited by encryptBody, or by the caller's cleanup
  return { reader, first };
}

/**
 * Reads, seals and writes everything; resolves once every byte is written and the source is
 * checked, to the rest of the work (the digests), which the caller may overlap with a flush.
 */
async function encryptBody(
  prepared: Promise<Prepared>,
  reading: Reading,
  layout: PrvLayout,
  out: Output,
  options: PrvEncryptOptions,
): Promise<() => Promise<PrvEncryption>> {
  const size = layout.plaintextLength;
  const batch = batchChunksOf(options);
  const { reader } = reading;
  // A file of one batch written to our own file is hashed at the end, in the digest step, which
  // runs while the file is flushed to disk: the hashing then takes no time from the sealing.
  const hashes: Sha256Pair = layout.chunkCount <= batch && out.freeAfterWrite
    ? sha256PairDeferred()
    : await sha256PairFor(size);
  const hash = (which: DigestIndex, bytes: Uint8Array, give: boolean) =>
    hashes.update(which, bytes, give);
  // The output, hashed here: each sealed chunk as soon as it and those before it are sealed,
  // while the rest are still sealing. Elsewhere: whole batches, after their write (the buffer is
  // then ours to give, not copied), or copied before it when the sink may keep them.
  let chunksHashed: Promise<void> = Promise.resolve();
  const hashInOrder = (sealed: Promise<Uint8Array>) => {
    chunksHashed = chunksHashed.then(() => sealed).then((chunk) => hash(1, chunk, false));
    chunksHashed.catch(() => {}); // a failed seal is reported by the batch
  };
  /** Writes one buffer and hashes it as output unless done per chunk. */
  const emit = async (bytes: Uint8Array) => {
    if (!hashes.here && !out.freeAfterWrite) hash(1, bytes, false);
    await out.write(bytes);
    if (!hashes.here && out.freeAfterWrite) hash(1, bytes, true);
  };
  /** The header, written with the first batch (one write fewer). */
  let header: Uint8Array | undefined;
  let sealing: Promise<Uint8Array[]> | undefined; // the previous batch, still being sealed
  let writing: Promise<void> = Promise.resolve(); // the batch before it, being written
  /** Hands a sealed batch to the sink after the one before it, without waiting for it. */
  const writeBehind = async (batch: Promise<Uint8Array[]>) => {
    const parts = await batch;
    const all = header ? [header, ...parts] : parts;
    // A buffer the hash worker is done with, when one of the size fits (no allocation).
    const bytes = join(all, hashes.reuse(all.reduce((n, part) => n + part.byteLength, 0)));
    header = undefined;
    await writing;
    writing = emit(bytes);
    writing.catch(() => {}); // awaited before the next write and at the end
  };
  let ended: Promise<void> | undefined; // the check that the source has nothing more
  let p: Prepared;
  try {
    p = await prepared;
    header = p.header;
    if (hashes.here) hash(1, p.header, false);
    for (let first = 0; first < layout.chunkCount; first += batch) {
      const count = Math.min(batch, layout.chunkCount - first);
      const start = first * CHUNK_SIZE;
      let plain: Uint8Array;
      if (first === 0) plain = await reading.first;
      else {
        await hashes.drained(HASH_BACKLOG_BYTES);
        const length = Math.min(size - start, count * CHUNK_SIZE);
        plain = await readBatch(reader, start, length, size, hashes.reuse(length));
      }
      if (first + count === layout.chunkCount) {
        ended = expectEnd(reader, size); // beside the sealing; awaited at the end
        ended.catch(() => {});
      }
      const seals: Promise<Uint8Array>[] = [];
      for (let i = first; i < first + count; i++) {
        const span = chunkSpan(layout, i);
        const at = span.plainStart - start;
        const place = { header: p.header, noncePrefix: p.noncePrefix, index: i, last: span.last };
        const seal = sealChunk(p.keys, place, plain.subarray(at, at + span.plainLength));
        if (hashes.here) hashInOrder(seal);
        seals.push(seal);
      }
      // WebCrypto copied each chunk when called: the batch is free, and goes to the hasher.
      hash(0, plain, true);
      const previous = sealing;
      sealing = Promise.all(seals);
      sealing.catch(() => {}); // awaited in order; never an unhandled rejection
      if (previous) await writeBehind(previous);
      PRV_GC_HINT.note(count);
    }
    if (sealing) await writeBehind(sealing);
    await writing;
    await chunksHashed;
    await ended;
  } catch (err) {
    hashes.abort();
    await writing.catch(() => {});
    await reader.cancel(err); // first: it ends a stream read still waiting
    await reading.first.catch(() => {});
    await ended?.catch(() => {});
    throw err;
  }
  return async () => {
    const [plaintextSha256, prvSha256] = await hashes.digest();
    return {
      cek: p.cek,
      fileUid: toHex(p.fileUid),
      plaintextSha256,
      prvSha256,
      plaintextSize: size,
      prvSize: layout.prvSize,
    };
  };
}

/**
 * Encrypts exactly `size` bytes of `source` as a `.prv`, handing the output to `sink` in order
 * (the header, then one buffer per batch of chunks; the next batch is read while the sink takes
 * one, and a slow sink slows the reading). The sink may keep the buffers it is given. Throws
 * PrvSourceError when the source ends before `size` bytes or has more; a stream source is
 * cancelled on any failure.
 */
export async function encryptPrv(
  source: PlaintextSource,
  size: number,
  sink: (bytes: Uint8Array) => Promise<void>,
  options: PrvEncryptOptions = {},
): Promise<PrvEncryption> {
  const layout = layoutForPlaintext(size);
  const prepared = prepare();
  prepared.catch(() => {}); // awaited by encryptBody
  const reading = startReading(source, size, batchChunksOf(options));
  const out = { write: sink, freeAfterWrite: false };
  return await (await encryptBody(prepared, reading, layout, out, options))();
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
  // Keys are derived and the first batch read while the temporary file is created; the digests
  // finish while it is flushed to disk (the rename waits for both).
  const layout = layoutForPlaintext(size);
  const prepared = prepare();
  prepared.catch(() => {}); // awaited by encryptBody
  const reading = startReading(source, size, batchChunksOf(options));
  try {
    const result = await writeFileAtomicallyThen(
      destPath,
      (_file, write) =>
        encryptBody(prepared, reading, layout, { write, freeAfterWrite: true }, options),
      (digests) => digests(),
    );
    return { ...result, path: destPath };
  } catch (err) {
    // Also when the output could not even be created: a stream cancelled, no read left running.
    await reading.reader.cancel(err);
    await reading.first.catch(() => {});
    throw err;
  }
}
