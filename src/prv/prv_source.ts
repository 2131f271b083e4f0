/**
 * Random-access sources a `.prv` reader decrypts from: bytes in memory, or an opened
 * `Deno.FsFile` (reads serialized, since a file has one position).
 */
import { PrvError, PrvErrorReason } from "./prv_errors.ts";

/** Positional reads over a `.prv` of a size fixed when the source was made. */
export interface PrvSource {
  readonly size: number;
  /**
   * Exactly `length` bytes at `position`; PrvError `truncated` when the file is now shorter.
   * With `into` (at least `length` bytes) a file source reads into it instead of allocating.
   */
  readAt(position: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
}

const shrank = (position: number, length: number, got: number) =>
  new PrvError(
    PrvErrorReason.TRUNCATED,
    `the file ended at byte ${position + got} while reading ${length} bytes at ${position} ` +
      `(it got shorter while it was read)`,
  );

/** A source over bytes in memory (no copy: reads return views). */
export function bytesSource(bytes: Uint8Array): PrvSource {
  return {
    size: bytes.byteLength,
    readAt(position, length) {
      const out = bytes.subarray(position, position + length);
      if (out.byteLength < length) return Promise.reject(shrank(position, length, out.byteLength));
      return Promise.resolve(out);
    },
  };
}

/**
 * A source over an opened file, its size taken now (or `size`, from a stat the caller just made
 * of this handle); the caller keeps ownership of `file`.
 */
export async function fileSource(file: Deno.FsFile, size?: number): Promise<PrvSource> {
  size ??= (await file.stat()).size;
  let tail: Promise<unknown> = Promise.resolve();
  const readAt = async (position: number, length: number, into?: Uint8Array) => {
    // lseek only sets the offset (no I/O): done here, it saves a round trip through the
    // runtime's blocking pool per read; the read itself stays asynchronous (it may hit the disk).
    file.seekSync(position, Deno.SeekMode.Start);
    const out = into && into.byteLength >= length
      ? into.subarray(0, length)
      : new Uint8Array(length);
    let at = 0;
    while (at < length) {
      const n = await file.read(out.subarray(at));
      if (n === null) throw shrank(position, length, at);
      at += n;
    }
    return out;
  };
  return {
    size,
    readAt(position, length, into) {
      const run = tail.then(() => readAt(position, length, into));
      tail = run.catch(() => {});
      return run;
    },
  };
}
