/**
 * Writing a file atomically: into a hidden temporary file in the destination's directory,
 * flushed to disk, then renamed over the final name; on failure the temporary file is removed.
 */

/** The directory part of `path` ('.' when it has none). */
function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/** `.<name>.tmp-<12 hex>` beside `path`: hidden, and never the final name. */
export function tempNameFor(path: string): string {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "" : path.slice(0, slash + 1);
  const rand = Array.from(
    crypto.getRandomValues(new Uint8Array(6)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  return `${dir}.${path.slice(slash + 1)}.tmp-${rand}`;
}

/** Writes every byte of `bytes` to `file`. */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength;) at += await file.write(bytes.subarray(at));
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
 * writeFileAtomically() with a last step that does not write: once `produce` has written
 * everything, `finish(produced)` runs while the file is flushed to disk, and the rename waits
 * for both (a `finish` that throws leaves no file, like a failing `produce`).
 */
export async function writeFileAtomicallyThen<P, T>(
  path: string,
  produce: (file: Deno.FsFile) => Promise<P>,
  finish: (produced: P) => Promise<T>,
): Promise<T> {
  const tmp = tempNameFor(path);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  let closed = false;
  try {
    const produced = await produce(file);
    const [synced, finished] = await Promise.allSettled([file.syncData(), finish(produced)]);
    if (synced.status === "rejected") throw synced.reason;
    if (finished.status === "rejected") throw finished.reason;
    file.close();
    closed = true;
    await Deno.rename(tmp, path);
    await syncDirectory(dirOf(path));
    return finished.value;
  } catch (err) {
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
