/**
 * Writing a file atomically: into a hidden temporary file in the destination's directory,
 * flushed to disk, then renamed over the final name; on failure the temporary file is removed.
 */
import { toHex } from "../bytes.ts";

/** The directory part of `path` ('.' when it has none). */
function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/** `.<name>.tmp-<12 hex>` beside `path`: hidden, and never the final name. */
export function tempNameFor(path: string): string {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "" : path.slice(0, slash + 1);
  const rand = toHex(crypto.getRandomValues(new Uint8Array(6)));
  return `${dir}.${path.slice(slash + 1)}.tmp-${rand}`;
}

/** Writes every byte of `bytes` to `file`. */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength;) at += await file.write(bytes.subarray(at));
}

/** Bytes written between two early flushes of a file being written atomically (16 MiB). */
export const EARLY_FLUSH_BYTES = 16 << 20;

/** writeAll() that starts flushing the file to disk now and then; see earlyFlushingWriter(). */
export interface EarlyFlushingWriter {
  write(bytes: Uint8Array): Promise<void>;
  /** Waits for a flush still running; throws if any early flush failed. */
  settle(): Promise<void>;
  /** No flush is running and none failed: settle() has nothing to wait for. */
  idle(): boolean;
}

/**
 * Writes to `file` and, every `every` bytes, starts `flush` in the background (one at a time),
 * so the disk writes overlap the producing instead of all waiting for the final flush, which
 * stays the caller's. `flush` must not use `file` itself: Deno runs the async operations of one
 * file handle one after another, so an fdatasync on it would hold up every write behind it
 * (writeFileAtomicallyThen flushes through a second handle). An early flush's failure is kept
 * and thrown by the next write or by settle(): a later fdatasync need not report an I/O error
 * again.
 */
export function earlyFlushingWriter(
  file: Deno.FsFile,
  flush: () => Promise<void>,
  every = EARLY_FLUSH_BYTES,
): EarlyFlushingWriter {
  let unflushed = 0;
  let flushing: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  return {
    async write(bytes) {
      if (failure) throw failure.error;
      await writeAll(file, bytes);
      unflushed += bytes.byteLength;
      if (unflushed >= every && !flushing) {
        unflushed = 0;
        flushing = flush().then(
          () => {
            flushing = undefined;
          },
          (error) => {
            failure ??= { error };
            flushing = undefined;
          },
        );
      }
    },
    async settle() {
      await flushing;
      if (failure) throw failure.error;
    },
    idle: () => !flushing && !failure,
  };
}

/**
 * Runs `produce` with a new temporary file beside `path` (mode 0600, created exclusively), then
 * flushes it (fdatasync), renames it to `path` (replacing a file there) and flushes the
 * directory. If `produce` or any step throws, the temporary file is removed and `path` is left
 * as it was. A process killed midway leaves at most the hidden temporary file.
 */
export function writeFileAtomically<T>(
  path: string,
  produce: (file: Deno.FsFile) => Promise<T>,
): Promise<T> {
  return writeFileAtomicallyThen(path, produce, (produced) => Promise.resolve(produced));
}

/**
 * writeFileAtomically() for large outputs, with a last step that does not write. `produce` gets
 * a writer that flushes early (earlyFlushingWriter), so little is left for the final flush;
 * once it has written everything, `finish(produced)` runs while the file is flushed, and the
 * rename waits for both (a `finish` that throws leaves no file, like a failing `produce`).
 */
export async function writeFileAtomicallyThen<P, T>(
  path: string,
  produce: (file: Deno.FsFile, write: (bytes: Uint8Array) => Promise<void>) => Promise<P>,
  finish: (produced: P) => Promise<T>,
): Promise<T> {
  const tmp = tempNameFor(path);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  // Early flushes go through a second handle of the same file (opened at the first one), so
  // the writes go on while they run; fdatasync flushes the file, whichever handle wrote it.
  let flusher: Deno.FsFile | undefined;
  const earlyFlush = async () => {
    flusher ??= await Deno.open(tmp, { write: true });
    await flusher.syncData();
  };
  const writer = earlyFlushingWriter(file, earlyFlush);
  let closed = false;
  const closeFlusher = () => {
    flusher?.close();
    flusher = undefined;
  };
  try {
    const produced = await produce(file, (bytes) => writer.write(bytes));
    // `finish` runs whatever the flushes do, so it always completes what `produce` started.
    // The final flush is the writing handle's own, after the early one ended; with none left it
    // starts now, before `finish` runs (which may work on this thread meanwhile).
    const flushed = writer.idle() ? file.syncData() : writer.settle().then(() => file.syncData());
    const [synced, finished] = await Promise.allSettled([flushed, finish(produced)]);
    if (synced.status === "rejected") throw synced.reason;
    if (finished.status === "rejected") throw finished.reason;
    closeFlusher();
    file.close();
    closed = true;
    await Deno.rename(tmp, path);
    await syncDirectory(dirOf(path));
    return finished.value;
  } catch (err) {
    await writer.settle().catch(() => {}); // no flush left running on a closed file
    closeFlusher();
    if (!closed) file.close();
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** fsync of a directory, so a rename in it survives a power loss (best effort). */
async function syncDirectory(dir: string): Promise<void> {
  try {
    using d = await Deno.open(dir, { read: true });
    await d.syncData();
  } catch {
    // Not every platform opens directories; the rename itself has happened.
  }
}
