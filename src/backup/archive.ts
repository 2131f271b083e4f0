/**
 * The backup's plaintext: a sequence of named entries (type, name, size, bytes) closed by an end
 * mark, written and read as streams so that no entry is ever held whole.
 */
import { BackupError, BackupFault } from "./errors.ts";

const ENTRY_FILE = 1;
const ENTRY_END = 0;
const MAX_NAME_BYTES = 1024;
const READ_BYTES = 64 * 1024;

/** Where archive bytes go (the sealed writer). */
export interface ArchiveSink {
  write(bytes: Uint8Array): Promise<void>;
}

/** An open file to copy in: read from a position, as `Deno.FsFile` and node's handles do. */
export interface EntrySource {
  read(into: Uint8Array): Promise<number | null>;
}

function entryHead(name: string, size: number): Uint8Array {
  const nameBytes = new TextEncoder().encode(name);
  if (nameBytes.length === 0 || nameBytes.length > MAX_NAME_BYTES) {
    throw new Error(`archive entry name "${name}" is empty or too long`);
  }
  const out = new Uint8Array(1 + 2 + nameBytes.length + 8);
  const view = new DataView(out.buffer);
  out[0] = ENTRY_FILE;
  view.setUint16(1, nameBytes.length);
  out.set(nameBytes, 3);
  view.setUint32(3 + nameBytes.length, Math.floor(size / 2 ** 32));
  view.setUint32(7 + nameBytes.length, size >>> 0);
  return out;
}

/** Writes entries; `onBytes` hears how many content bytes went out (for progress). */
export class ArchiveWriter {
  constructor(
    private readonly sink: ArchiveSink,
    private readonly onBytes: (n: number) => void = () => {},
  ) {}

  /** Adds an entry held in memory (small ones: the manifest, the license). */
  async addBytes(name: string, bytes: Uint8Array): Promise<void> {
    await this.sink.write(entryHead(name, bytes.length));
    await this.sink.write(bytes);
    this.onBytes(bytes.length);
  }

  /** Adds exactly `size` bytes read from `source`; fails if it ends sooner. */
  async addStream(name: string, size: number, source: EntrySource): Promise<void> {
    await this.sink.write(entryHead(name, size));
    const buf = new Uint8Array(Math.min(READ_BYTES, Math.max(size, 1)));
    let left = size;
    while (left > 0) {
      const got = await source.read(buf.subarray(0, Math.min(buf.length, left)));
      if (got === null) throw new Error(`"${name}" ended ${left} bytes early while it was copied`);
      await this.sink.write(buf.subarray(0, got));
      left -= got;
      this.onBytes(got);
    }
  }

  /** Writes the end mark. */
  async finish(): Promise<void> {
    await this.sink.write(new Uint8Array([ENTRY_END]));
  }
}

/** One entry as read: its name, size and content (consume it before asking for the next). */
export interface ArchiveEntry {
  readonly name: string;
  readonly size: number;
  readonly content: AsyncGenerator<Uint8Array>;
}

/** Takes exact byte counts from a stream of chunks. */
class ChunkCursor {
  #chunk: Uint8Array = new Uint8Array(0);
  #at = 0;
  constructor(private readonly chunks: AsyncIterator<Uint8Array>, private readonly name: string) {}

  /** At most `n` bytes (at least one), from the current chunk or the next. */
  async some(n: number): Promise<Uint8Array> {
    while (this.#at >= this.#chunk.length) {
      const r = await this.chunks.next();
      if (r.done) {
        throw new BackupError(
          BackupFault.DAMAGED,
          `backup ${this.name} is damaged: its content ends without the end mark`,
        );
      }
      this.#chunk = r.value;
      this.#at = 0;
    }
    const out = this.#chunk.subarray(this.#at, Math.min(this.#chunk.length, this.#at + n));
    this.#at += out.length;
    return out;
  }

  /** Exactly `n` bytes, copied. */
  async exact(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    for (let fill = 0; fill < n;) {
      const part = await this.some(n - fill);
      out.set(part, fill);
      fill += part.length;
    }
    return out;
  }

  /** Whether the stream has no more bytes. */
  async atEnd(): Promise<boolean> {
    while (this.#at >= this.#chunk.length) {
      const r = await this.chunks.next();
      if (r.done) return true;
      this.#chunk = r.value;
      this.#at = 0;
    }
    return false;
  }
}

/** The entries of an archive read from `chunks` (`name`: the file, in errors). */
export async function* readArchive(
  chunks: AsyncIterable<Uint8Array>,
  name: string,
): AsyncGenerator<ArchiveEntry> {
  const cursor = new ChunkCursor(chunks[Symbol.asyncIterator](), name);
  for (;;) {
    const [type] = await cursor.exact(1);
    if (type === ENTRY_END) {
      if (!await cursor.atEnd()) {
        throw new BackupError(
          BackupFault.DAMAGED,
          `backup ${name} is damaged: data after its end mark`,
        );
      }
      return;
    }
    if (type !== ENTRY_FILE) {
      throw new BackupError(
        BackupFault.DAMAGED,
        `backup ${name} is damaged: unknown entry type ${type}`,
      );
    }
    const nameLength = new DataView((await cursor.exact(2)).buffer).getUint16(0);
    if (nameLength === 0 || nameLength > MAX_NAME_BYTES) {
      throw new BackupError(
        BackupFault.DAMAGED,
        `backup ${name} is damaged: an entry name of ${nameLength} bytes`,
      );
    }
    const entryName = new TextDecoder("utf-8", { fatal: true }).decode(
      await cursor.exact(nameLength),
    );
    const sizeView = new DataView((await cursor.exact(8)).buffer);
    const size = sizeView.getUint32(0) * 2 ** 32 + sizeView.getUint32(4);
    let left = size;
    const content = (async function* () {
      while (left > 0) {
        const part = await cursor.some(Math.min(left, READ_BYTES));
        left -= part.length;
        yield part;
      }
    })();
    yield { name: entryName, size, content };
    for await (const _ of content) { /* skip what the consumer left */ }
    if (left > 0) {
      // The consumer stopped early and the generator was closed: drain the rest.
      while (left > 0) left -= (await cursor.some(Math.min(left, READ_BYTES))).length;
    }
  }
}
