/**
 * The backup file's header (docs/backup.md#file-format): magic, version, the Argon2id cost and
 * salt, the chunk size and the passphrase check. Every chunk authenticates it as associated data.
 */
import { type KdfParams, SALT_BYTES } from "./kdf.ts";
import { BackupError, BackupFault } from "./errors.ts";

/** The file's first 8 bytes. */
export const BACKUP_MAGIC = new TextEncoder().encode("EDGEBKP\n");
/** The one format version this build writes and reads. */
export const BACKUP_VERSION = 1;
/** KDF identifier 1: Argon2id (version 0x13). */
const KDF_ARGON2ID = 1;
/** Plaintext bytes per chunk for new backups. */
export const DEFAULT_CHUNK_BYTES = 64 * 1024;
/** Largest chunk a header may declare (the reader holds one chunk and the next). */
const MAX_CHUNK_BYTES = 1024 * 1024;
/** Length of the passphrase check value. */
export const CHECK_BYTES = 32;
/** Header length: magic 8, version 2, kdf 1, lanes 1, memory 4, passes 4, salt 16, chunk 4, check 32. */
export const HEADER_BYTES = 8 + 2 + 1 + 1 + 4 + 4 + SALT_BYTES + 4 + CHECK_BYTES;

/** The decoded header. */
export interface BackupHeader {
  readonly kdf: KdfParams;
  readonly salt: Uint8Array;
  readonly chunkBytes: number;
  readonly check: Uint8Array;
}

/** Encodes `h` into its `HEADER_BYTES` bytes. */
export function encodeHeader(h: BackupHeader): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(HEADER_BYTES);
  const view = new DataView(out.buffer);
  out.set(BACKUP_MAGIC, 0);
  view.setUint16(8, BACKUP_VERSION);
  out[10] = KDF_ARGON2ID;
  out[11] = h.kdf.parallelism;
  view.setUint32(12, h.kdf.memoryKiB);
  view.setUint32(16, h.kdf.iterations);
  out.set(h.salt, 20);
  view.setUint32(20 + SALT_BYTES, h.chunkBytes);
  out.set(h.check, 24 + SALT_BYTES);
  return out;
}

/** Decodes a header; `name` is the file as shown in errors. Throws BackupError. */
export function decodeHeader(bytes: Uint8Array, name: string): BackupHeader {
  const magicOk = bytes.length >= BACKUP_MAGIC.length &&
    BACKUP_MAGIC.every((b, i) => bytes[i] === b);
  if (!magicOk) {
    const prefix = bytes.length > 0 && bytes.length < BACKUP_MAGIC.length &&
      BACKUP_MAGIC.subarray(0, bytes.length).every((b, i) => bytes[i] === b);
    if (prefix) {
      throw new BackupError(
        BackupFault.TRUNCATED,
        `backup ${name} is truncated: it ends inside its header`,
      );
    }
    throw new BackupError(
      BackupFault.NOT_A_BACKUP,
      `${name} is not a backup of this gateway (it does not start with the backup header)`,
    );
  }
  if (bytes.length < HEADER_BYTES) {
    throw new BackupError(
      BackupFault.TRUNCATED,
      `backup ${name} is truncated: it ends inside its header`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint16(8);
  if (version !== BACKUP_VERSION || bytes[10] !== KDF_ARGON2ID) {
    throw new BackupError(
      BackupFault.NOT_A_BACKUP,
      `backup ${name} has format version ${version}, key derivation ${bytes[10]}; this gateway ` +
        `reads version ${BACKUP_VERSION} with Argon2id (a newer gateway wrote it, or it is damaged)`,
    );
  }
  const chunkBytes = view.getUint32(20 + SALT_BYTES);
  if (chunkBytes < 1 || chunkBytes > MAX_CHUNK_BYTES) {
    throw new BackupError(
      BackupFault.DAMAGED,
      `backup ${name} is damaged: its header declares chunks of ${chunkBytes} bytes`,
    );
  }
  return {
    kdf: { parallelism: bytes[11], memoryKiB: view.getUint32(12), iterations: view.getUint32(16) },
    salt: bytes.slice(20, 20 + SALT_BYTES),
    chunkBytes,
    check: bytes.slice(24 + SALT_BYTES, HEADER_BYTES),
  };
}
