/**
 * Step 1 of provisioning: the data directory exists, is private (0700) and writable, and this
 * process holds its exclusive lock (released by the OS when the process dies).
 */
import { DataDirLayout } from "../constants.ts";
import { StartupError } from "../errors.ts";

/** Creates `dir` (0700) if missing and checks that it is a writable directory. */
export function prepareDataDir(dir: string): void {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(dir, 0o700);
  } catch (cause) {
    throw new StartupError(`Cannot prepare data directory ${dir}: ${errText(cause)}`, undefined, {
      cause,
    });
  }
  if (!Deno.statSync(dir).isDirectory) {
    throw new StartupError(`Data directory ${dir} is not a directory`);
  }
  assertWritable(dir, `Data directory ${dir} is not writable`);
}

/** Throws StartupError(`message`) unless a file can be created and removed in `dir`. */
export function assertWritable(dir: string, message: string): void {
  const probe = `${dir}/.write-probe-${Deno.pid}`;
  try {
    Deno.writeFileSync(probe, new Uint8Array(), { mode: 0o600 });
    Deno.removeSync(probe);
  } catch (cause) {
    throw new StartupError(`${message}: ${errText(cause)}`, undefined, { cause });
  }
}

/** An exclusive lock on `<dataDir>/gateway.lock`, held for the daemon's lifetime. */
export class DataDirLock {
  private constructor(private readonly file: Deno.FsFile, readonly path: string) {}

  /** Takes the lock without waiting; a second daemon on the same directory fails at once. */
  static acquire(dataDir: string): DataDirLock {
    const path = `${dataDir}/${DataDirLayout.LOCK_FILE}`;
    const file = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
    if (!file.tryLockSync(true)) {
      const holder = readHolder(path);
      file.close();
      throw new StartupError(
        `another gateway is already running on data directory ${dataDir}` +
          ` (lock file ${path}${holder ? ` held by pid ${holder}` : ""})`,
      );
    }
    file.truncateSync(0);
    file.writeSync(new TextEncoder().encode(`${Deno.pid}\n`));
    return new DataDirLock(file, path);
  }

  /** Releases the lock (idempotent). */
  release(): void {
    try {
      this.file.unlockSync();
      this.file.close();
    } catch { /* already released */ }
  }
}

function readHolder(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The message of an error, or its string form. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
