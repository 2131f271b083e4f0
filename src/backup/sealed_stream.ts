/**
 * The backup's encryption layer: a header, then the plaintext in chunks, each sealed with
 * AES-256-GCM under a nonce made of its index and a final flag, the header as associated data.
 * So a changed byte, reordered chunks, a cut at a chunk boundary and appended data are each
 * detected; writer and reader hold one chunk (two for the reader's look-ahead), whatever the size.
 */
import { timingSafeEqual } from "node:crypto";
import { GC_HINT_CHUNKS, YoungGarbageHint } from "../prv/mod.ts";
import { BackupError, BackupFault } from "./errors.ts";
import {
  type BackupHeader,
  decodeHeader,
  DEFAULT_CHUNK_BYTES,
  encodeHeader,
  HEADER_BYTES,
} from "./header.ts";
import {
  DEFAULT_KDF,
  deriveBackupKey,
  KDF_LIMITS,
  type KdfParams,
  kdfParamsAcceptable,
  SALT_BYTES,
} from "./kdf.ts";

/**
 * WebCrypto returns a new buffer per chunk and V8 collects them late: a young-generation GC every
 * 64 chunks (when the daemon runs with `--expose-gc`, as scripts/permissions.sh sets) keeps the
 * process's memory flat however large the backup (as for `.prv` streams).
 */
const GC_HINT = new YoungGarbageHint(GC_HINT_CHUNKS);

/** Bytes of the GCM tag after each chunk. */
export const TAG_BYTES = 16;

/** Where sealed bytes go (all of them, in order). */
export interface ByteSink {
  write(bytes: Uint8Array): Promise<void>;
}

/** Where sealed bytes come from: `read` fills part of `into`, null at the end. */
export interface ByteSource {
  read(into: Uint8Array): Promise<number | null>;
}

/** Options of `createSealedWriter`; the defaults are the ones new backups use. */
export interface SealOptions {
  readonly kdf?: KdfParams;
  readonly chunkBytes?: number;
}

/** The 12-byte GCM nonce of chunk `index`: the index (64 bits), three zero bytes, the flag. */
function nonce(index: number, final: boolean): Uint8Array<ArrayBuffer> {
  const iv = new Uint8Array(12);
  const view = new DataView(iv.buffer);
  view.setUint32(0, Math.floor(index / 2 ** 32));
  view.setUint32(4, index >>> 0);
  iv[11] = final ? 1 : 0;
  return iv;
}

/** Writes the plaintext given to `write` sealed chunk by chunk; `close` seals the final chunk. */
export class SealedWriter {
  readonly #buf: Uint8Array<ArrayBuffer>;
  #fill = 0;
  #index = 0;
  #closed = false;

  private constructor(
    private readonly sink: ByteSink,
    private readonly key: CryptoKey,
    private readonly header: Uint8Array<ArrayBuffer>,
    chunkBytes: number,
  ) {
    this.#buf = new Uint8Array(chunkBytes);
  }

  /** Derives the key from `passphrase` and a fresh salt and writes the header. */
  static async create(
    sink: ByteSink,
    passphrase: string,
    options: SealOptions = {},
  ): Promise<SealedWriter> {
    const kdf = options.kdf ?? DEFAULT_KDF;
    const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
    const { key, check } = await deriveBackupKey(passphrase, salt, kdf);
    const header = encodeHeader({ kdf, salt, chunkBytes, check });
    await sink.write(header);
    return new SealedWriter(sink, key, header, chunkBytes);
  }

  /** Adds plaintext; a full chunk is sealed once more data follows it (it is not the last). */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.#closed) throw new Error("the sealed stream is closed");
    let at = 0;
    while (at < bytes.length) {
      if (this.#fill === this.#buf.length) {
        await this.#seal(this.#buf, false);
        this.#fill = 0;
      }
      const n = Math.min(bytes.length - at, this.#buf.length - this.#fill);
      this.#buf.set(bytes.subarray(at, at + n), this.#fill);
      this.#fill += n;
      at += n;
    }
  }

  /** Seals what is left (possibly nothing) as the final chunk. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#seal(this.#buf.subarray(0, this.#fill), true);
    this.#buf.fill(0);
  }

  async #seal(plain: Uint8Array<ArrayBuffer>, final: boolean): Promise<void> {
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: nonce(this.#index, final), additionalData: this.header },
      this.key,
      plain,
    );
    this.#index++;
    await this.sink.write(new Uint8Array(sealed));
    GC_HINT.note();
  }
}

/** Reads up to `n` bytes (fewer only at the end of `source`). */
async function readUpTo(source: ByteSource, n: number): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(n);
  let fill = 0;
  while (fill < n) {
    const got = await source.read(out.subarray(fill));
    if (got === null) break;
    fill += got;
  }
  return out.subarray(0, fill);
}

/** A backup whose header was read and whose passphrase was checked; `chunks()` yields its plaintext. */
export class SealedReader {
  private constructor(
    private readonly source: ByteSource,
    private readonly name: string,
    private readonly key: CryptoKey,
    private readonly headerBytes: Uint8Array<ArrayBuffer>,
    private readonly header: BackupHeader,
  ) {}

  /**
   * Reads the header of `source` (`name` as shown in errors) and checks `passphrase` against it.
   * Throws BackupError: not a backup, truncated in the header, a cost beyond `KDF_LIMITS`, or the
   * wrong passphrase.
   */
  static async open(source: ByteSource, passphrase: string, name: string): Promise<SealedReader> {
    const bytes = await readUpTo(source, HEADER_BYTES);
    const header = decodeHeader(bytes, name);
    if (!kdfParamsAcceptable(header.kdf)) {
      const { memoryKiB, iterations, parallelism } = header.kdf;
      throw new BackupError(
        BackupFault.DAMAGED,
        `backup ${name} is damaged or hostile: its header asks for Argon2id with ` +
          `${memoryKiB} KiB, ${iterations} passes, ${parallelism} lanes (at most ` +
          `${KDF_LIMITS.maxMemoryKiB} KiB, ${KDF_LIMITS.maxIterations}, ${KDF_LIMITS.maxParallelism})`,
      );
    }
    const { key, check } = await deriveBackupKey(passphrase, header.salt, header.kdf);
    if (!timingSafeEqual(check, header.check)) {
      throw new BackupError(
        BackupFault.WRONG_PASSPHRASE,
        `wrong passphrase for backup ${name} (the passphrase does not open it)`,
      );
    }
    return new SealedReader(source, name, key, bytes, header);
  }

  /**
   * The plaintext, chunk by chunk, each authenticated before it is yielded. Throws BackupError
   * `truncated` when the file ends before its final chunk and `damaged` when a chunk does not
   * authenticate (changed, moved, cut inside, or followed by more data).
   */
  async *chunks(): AsyncGenerator<Uint8Array> {
    const record = this.header.chunkBytes + TAG_BYTES;
    let current = await readUpTo(this.source, record);
    for (let index = 0;; index++) {
      const next = current.length === record ? await readUpTo(this.source, record) : undefined;
      const last = next === undefined || next.length === 0;
      if (current.length < TAG_BYTES) {
        throw new BackupError(
          BackupFault.TRUNCATED,
          `backup ${this.name} is truncated: it ends before its last chunk (chunk ${index})`,
        );
      }
      const plain = await this.#open(current, index, last);
      if (plain === undefined) {
        if (last && await this.#open(current, index, false) !== undefined) {
          throw new BackupError(
            BackupFault.TRUNCATED,
            `backup ${this.name} is truncated: it ends after chunk ${index}, before its last chunk`,
          );
        }
        throw new BackupError(
          BackupFault.DAMAGED,
          `backup ${this.name} is damaged or was tampered with: chunk ${index} does not ` +
            "authenticate (changed, moved, cut inside, or followed by foreign data)",
        );
      }
      yield plain;
      GC_HINT.note();
      if (last) return;
      current = next!;
    }
  }

  async #open(
    sealed: Uint8Array<ArrayBuffer>,
    index: number,
    final: boolean,
  ): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(
        await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: nonce(index, final), additionalData: this.headerBytes },
          this.key,
          sealed,
        ),
      );
    } catch {
      return undefined;
    }
  }
}
