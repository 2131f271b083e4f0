/**
 * The data directory's exclusive lock (`gateway.lock`): an OS file lock (flock) taken without
 * waiting, so a second daemon on the same directory fails at once, and released by the kernel
 * when the holding process dies, however it dies — a stale lock file never blocks a restart.
 */
import { DataDirLayout } from "../constants.ts";
import { diskFullError, StartupError } from "../errors.ts";
import { errText } from "./data_dir.ts";

/** An exclusive lock on `<dataDir>/gateway.lock`, held for the daemon's lifetime. */
export class DataDirLock {
  #released = false;

  private constructor(private readonly file: Deno.FsFile, readonly path: string) {}

  /**
   * Takes the lock without waiting and writes this process's pid into the file. Throws
   * StartupError "another gateway is already running on data directory X (lock file X/gateway.lock
   * held by pid N)" when another process (or another open in this one) holds it.
   */
  static acquire(dataDir: string): DataDirLock {
    const path = `${dataDir}/${DataDirLayout.LOCK_FILE}`;
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
    } catch (cause) {
      throw new StartupError(`Cannot open lock file ${path}: ${errText(cause)}`, undefined, {
        cause,
      });
    }
    let locked: boolean;
    try {
      locked = file.tryLockSync(true);
    } catch (cause) {
      file.close();
      throw new StartupError(`Cannot lock ${path}: ${errText(cause)}`, undefined, { cause });
    }
    if (!locked) {
      const holder = readHolder(path);
      file.close();
      throw new StartupError(
        `another gateway is already running on data directory ${dataDir}` +
          ` (lock file ${path} held by ${holder ? `pid ${holder}` : "another process"})`,
      );
    }
    try {
      Deno.chmodSync(path, 0o600);
      file.truncateSync(0);
      file.writeSync(new TextEncoder().encode(`${Deno.pid}\n`));
    } catch (cause) {
      // The pid is for the operator only; the OS lock is taken. A full disk pauses messaging, it
      // does not stop the start (the database says so at once).
      if (diskFullError(cause) !== undefined) return new DataDirLock(file, path);
      file.close();
      throw new StartupError(`Cannot write lock file ${path}: ${errText(cause)}`, undefined, {
        cause,
      });
    }
    return new DataDirLock(file, path);
  }

  /** Releases the lock (idempotent). The file stays; only the OS lock matters. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    try {
      this.file.unlockSync();
    } finally {
      this.file.close();
    }
  }
}

/** The pid written by the holder, if readable. */
function readHolder(path: string): string | undefined {
  try {
    const text = Deno.readTextFileSync(path).trim();
    return /^\d+$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}
