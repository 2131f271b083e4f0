/**
 * The `.prv` v1 byte layout (docs/prv-format.md), pure: header encode and parse, chunk nonces,
 * and the geometry that maps plaintext offsets to chunks and a file size to a plaintext length.
 */
import { PrvError, PrvErrorReason } from "./prv_errors.ts";

/** `\x89PRV\r\n\x1a\n`: high-bit byte, a name, then CR LF, Ctrl-Z, LF (PNG's pattern). */
export const PRV_MAGIC: Readonly<Uint8Array> = new Uint8Array([
  0x89,
  0x50,
  0x52,
  0x56,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
]);
/** The one version this build writes and reads. */
export const PRV_VERSION = 1;
/** Suite 1: AES-256-GCM STREAM, HKDF-SHA-256 keys, HMAC-SHA-256 header MAC. */
export const PRV_SUITE_AES256GCM_STREAM = 1;
/** Plaintext bytes per chunk: 2^16 = 64 KiB (the last chunk may be shorter). */
export const CHUNK_LOG2 = 16;
export const CHUNK_SIZE = 1 << CHUNK_LOG2;
/** AES-GCM tag bytes after every chunk's ciphertext. */
export const TAG_SIZE = 16;
/** Bytes of the v1 header. */
export const HEADER_SIZE = 88;
/** Where the header MAC starts; it covers the bytes before it. */
export const HEADER_MAC_OFFSET = 56;
export const FILE_UID_SIZE = 16;
export const SALT_SIZE = 16;
export const NONCE_PREFIX_SIZE = 7;
/** Chunk indexes are a u32 in the nonce. */
export const MAX_CHUNKS = 2 ** 32;

const OFF = {
  version: 8,
  suite: 9,
  chunkLog2: 10,
  flags: 11,
  headerLen: 12,
  reserved16: 14,
  fileUid: 16,
  salt: 32,
  noncePrefix: 48,
  reserved8: 55,
} as const;

/** The random fields a writer draws per file. */
export interface PrvHeaderFields {
  /** 16 random bytes naming the file in PDUs. */
  readonly fileUid: Uint8Array;
  /** 16 random bytes, the HKDF salt. */
  readonly salt: Uint8Array;
  /** 7 random bytes, the start of every chunk nonce. */
  readonly noncePrefix: Uint8Array;
}

/** A parsed header: its fields and its 88 bytes (the AAD of every chunk). */
export interface PrvHeader extends PrvHeaderFields {
  readonly bytes: Uint8Array;
  /** The 32-byte header MAC (last 32 bytes of `bytes`). */
  readonly mac: Uint8Array;
}

function expectLength(name: string, value: Uint8Array, size: number): void {
  if (value.byteLength !== size) {
    throw new RangeError(`${name} must be ${size} bytes, got ${value.byteLength}`);
  }
}

/**
 * The 88 header bytes with the MAC field zero (the MAC covers bytes 0..55 and is written into
 * bytes 56..87 by the caller once computed).
 */
export function encodeHeader(fields: PrvHeaderFields): Uint8Array {
  expectLength("fileUid", fields.fileUid, FILE_UID_SIZE);
  expectLength("salt", fields.salt, SALT_SIZE);
  expectLength("noncePrefix", fields.noncePrefix, NONCE_PREFIX_SIZE);
  const out = new Uint8Array(HEADER_SIZE);
  const view = new DataView(out.buffer);
  out.set(PRV_MAGIC, 0);
  out[OFF.version] = PRV_VERSION;
  out[OFF.suite] = PRV_SUITE_AES256GCM_STREAM;
  out[OFF.chunkLog2] = CHUNK_LOG2;
  out[OFF.flags] = 0;
  view.setUint16(OFF.headerLen, HEADER_SIZE);
  out.set(fields.fileUid, OFF.fileUid);
  out.set(fields.salt, OFF.salt);
  out.set(fields.noncePrefix, OFF.noncePrefix);
  return out;
}

/** The header bytes that the MAC covers. */
export function headerMacInput(header: Uint8Array): Uint8Array {
  return header.subarray(0, HEADER_MAC_OFFSET);
}

/**
 * Parses and checks the header at the start of `bytes` (magic, version, then the v1 constants);
 * the MAC is returned, not verified (that needs the key: prv_crypto.ts). Throws PrvError.
 */
export function parseHeader(bytes: Uint8Array): PrvHeader {
  if (bytes.byteLength < PRV_MAGIC.byteLength || PRV_MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new PrvError(
      PrvErrorReason.BAD_MAGIC,
      "not a .prv file (its first bytes are not the magic)",
    );
  }
  const version = bytes[OFF.version];
  if (version !== PRV_VERSION) {
    const found = version === undefined ? "none (file ends after the magic)" : String(version);
    throw new PrvError(
      PrvErrorReason.UNSUPPORTED_VERSION,
      `.prv version ${found} is not supported (this build reads version ${PRV_VERSION})`,
    );
  }
  if (bytes.byteLength < HEADER_SIZE) {
    throw new PrvError(
      PrvErrorReason.BAD_HEADER,
      `the header is cut short (${bytes.byteLength} of ${HEADER_SIZE} bytes)`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_SIZE);
  const checks: [string, number, number][] = [
    ["suite", bytes[OFF.suite], PRV_SUITE_AES256GCM_STREAM],
    ["chunk size (log2)", bytes[OFF.chunkLog2], CHUNK_LOG2],
    ["flags", bytes[OFF.flags], 0],
    ["header length", view.getUint16(OFF.headerLen), HEADER_SIZE],
    ["reserved field at offset 14", view.getUint16(OFF.reserved16), 0],
    ["reserved field at offset 55", bytes[OFF.reserved8], 0],
  ];
  for (const [name, found, expected] of checks) {
    if (found !== expected) {
      throw new PrvError(
        PrvErrorReason.BAD_HEADER,
        `header ${name} is ${found}, version ${PRV_VERSION} requires ${expected}`,
      );
    }
  }
  const own = bytes.slice(0, HEADER_SIZE);
  return {
    bytes: own,
    fileUid: own.subarray(OFF.fileUid, OFF.fileUid + FILE_UID_SIZE),
    salt: own.subarray(OFF.salt, OFF.salt + SALT_SIZE),
    noncePrefix: own.subarray(OFF.noncePrefix, OFF.noncePrefix + NONCE_PREFIX_SIZE),
    mac: own.subarray(HEADER_MAC_OFFSET, HEADER_SIZE),
  };
}

/** The 12-byte nonce of chunk `index`: prefix ‖ u32 BE index ‖ 0x01 for the final chunk. */
export function chunkNonce(noncePrefix: Uint8Array, index: number, last: boolean): Uint8Array {
  expectLength("noncePrefix", noncePrefix, NONCE_PREFIX_SIZE);
  if (!Number.isInteger(index) || index < 0 || index >= MAX_CHUNKS) {
    throw new RangeError(`chunk index ${index} is outside 0..2^32-1`);
  }
  const nonce = new Uint8Array(12);
  nonce.set(noncePrefix, 0);
  new DataView(nonce.buffer).setUint32(NONCE_PREFIX_SIZE, index);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

/** The sizes of one `.prv` file. */
export interface PrvLayout {
  readonly plaintextLength: number;
  readonly chunkCount: number;
  readonly prvSize: number;
}

/** Where chunk `index` lies in the `.prv` and in the plaintext. */
export interface ChunkSpan {
  readonly index: number;
  readonly last: boolean;
  /** Offset of the chunk (ciphertext ‖ tag) in the `.prv`. */
  readonly offset: number;
  /** Bytes of the chunk on disk (plaintext length + TAG_SIZE). */
  readonly length: number;
  /** Offset of its first plaintext byte. */
  readonly plainStart: number;
  readonly plainLength: number;
}

/** The layout of a `.prv` holding `plaintextLength` bytes. */
export function layoutForPlaintext(plaintextLength: number): PrvLayout {
  if (!Number.isSafeInteger(plaintextLength) || plaintextLength < 0) {
    throw new RangeError(`plaintext length ${plaintextLength} is not a size`);
  }
  const chunkCount = Math.max(1, Math.ceil(plaintextLength / CHUNK_SIZE));
  if (chunkCount > MAX_CHUNKS) {
    throw new RangeError(`a .prv holds at most ${MAX_CHUNKS} chunks of ${CHUNK_SIZE} bytes`);
  }
  return {
    plaintextLength,
    chunkCount,
    prvSize: HEADER_SIZE + plaintextLength + chunkCount * TAG_SIZE,
  };
}

/**
 * The layout of a `.prv` file of `prvSize` bytes, i.e. its plaintext length (docs, Geometry);
 * throws PrvError `bad_size` for a size no v1 writer produces.
 */
export function layoutForPrvSize(prvSize: number): PrvLayout {
  const body = prvSize - HEADER_SIZE;
  const bad = (why: string) =>
    new PrvError(PrvErrorReason.BAD_SIZE, `a file of ${prvSize} bytes is not a whole .prv: ${why}`);
  if (!Number.isSafeInteger(prvSize) || body < TAG_SIZE) throw bad("no room for one chunk");
  const full = CHUNK_SIZE + TAG_SIZE;
  const chunkCount = Math.ceil(body / full);
  const finalLength = body - (chunkCount - 1) * full;
  if (finalLength < TAG_SIZE || (finalLength === TAG_SIZE && chunkCount > 1)) {
    throw bad("its final chunk is cut short (truncated)");
  }
  if (chunkCount > MAX_CHUNKS) throw bad("more chunks than a .prv can hold");
  return { plaintextLength: body - chunkCount * TAG_SIZE, chunkCount, prvSize };
}

/** Where chunk `index` of `layout` lies. */
export function chunkSpan(layout: PrvLayout, index: number): ChunkSpan {
  if (!Number.isInteger(index) || index < 0 || index >= layout.chunkCount) {
    throw new RangeError(`chunk ${index} does not exist (the file has ${layout.chunkCount})`);
  }
  const last = index === layout.chunkCount - 1;
  const plainStart = index * CHUNK_SIZE;
  const plainLength = last ? layout.plaintextLength - plainStart : CHUNK_SIZE;
  return {
    index,
    last,
    offset: HEADER_SIZE + index * (CHUNK_SIZE + TAG_SIZE),
    length: plainLength + TAG_SIZE,
    plainStart,
    plainLength,
  };
}

/** The chunk holding plaintext byte `offset`. */
export function chunkIndexOf(offset: number): number {
  return Math.floor(offset / CHUNK_SIZE);
}

/**
 * The chunks a plaintext range `[start, end)` touches, as `[first, last]` indexes; undefined for
 * an empty range. Throws RangeError for a range outside `[0, plaintextLength]`.
 */
export function chunksForRange(
  layout: PrvLayout,
  start: number,
  end: number,
): [number, number] | undefined {
  if (
    !Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start ||
    end > layout.plaintextLength
  ) {
    throw new RangeError(
      `range [${start}, ${end}) is outside the plaintext [0, ${layout.plaintextLength})`,
    );
  }
  if (start === end) return undefined;
  return [chunkIndexOf(start), chunkIndexOf(end - 1)];
}
