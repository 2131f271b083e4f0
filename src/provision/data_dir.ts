/**
 * Step 1 of provisioning: the data directory exists, is private (0700) and writable. The
 * exclusive lock that follows lives in lock.ts; the helpers here serve step 2 as well.
 */
import { DataDirLayout } from "../constants.ts";
import { diskFullError, StartupError } from "../errors.ts";

/** The user the daemon runs as; undefined when it cannot be asked (no `sys` permission). */
function currentUid(): number | undefined {
  try {
    return Deno.uid() ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * For a directory owned by another user than the daemon's (a Docker volume or bind mount owned
 * by root, while the image runs as UID 1000): the contract's "Accounts directory … is not writable"
 * (docs/contract.md §1.4) saying exactly what to run. Undefined when the owner is not the problem
 * (or we run as root). Deno cannot drop root privileges, so the daemon cannot chown the directory
 * itself and go on.
 */
export function foreignOwnerError(
  dir: string,
  info: Pick<Deno.FileInfo, "uid" | "mode">,
  cause: unknown,
  uid: number | undefined = currentUid(),
): StartupError | undefined {
  if (uid === undefined || uid === 0 || info.uid === null || info.uid === uid) return undefined;
  const mode = ((info.mode ?? 0) & 0o777).toString(8).padStart(4, "0");
  const chown = `chown -R ${uid}:${uid}`;
  return new StartupError(
    `Accounts directory ${dir} is not writable by UID ${uid}, the user the daemon runs as ` +
      `(it is owned by UID ${info.uid}, mode ${mode}). Give it to UID ${uid}, then start again: ` +
      `as root, ${chown} ${dir}; for a Docker volume: docker run --rm -v <volume>:${dir} ` +
      `busybox ${chown} ${dir}; for a bind mount: ${chown} <host directory> on the host`,
    undefined,
    { cause },
  );
}

/** Creates `dir` (0700) if missing, makes it private, and checks that it is a writable directory. */
export function prepareDataDir(dir: string): void {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new StartupError(`Cannot prepare data directory ${dir}: ${errText(cause)}`, undefined, {
      cause,
    });
  }
  const info = statOrThrow(dir, "data directory");
  if (!info.isDirectory) {
    throw new StartupError(`Data directory ${dir} is not a directory`);
  }
  securePrivate(
    dir,
    0o700,
    (cause) =>
      foreignOwnerError(dir, info, cause) ??
        new StartupError(`Failed to secure data directory ${dir}: ${errText(cause)}`, undefined, {
          cause,
        }),
  );
  try {
    assertWritable(dir, `Data directory ${dir} is not writable`);
  } catch (err) {
    throw foreignOwnerError(dir, info, err) ?? err;
  }
}

/**
 * Creates the default files directory `<data dir>/files` (0700) when it is missing, so files can
 * be put there to send; a files directory configured elsewhere is the operator's to create.
 */
export function prepareDefaultFilesDir(filesDir: string, dataDir: string): void {
  if (filesDir !== `${dataDir}/${DataDirLayout.FILES_DIR}`) return;
  try {
    Deno.mkdirSync(filesDir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new StartupError(
      `Cannot create files directory ${filesDir}: ${errText(cause)}`,
      undefined,
      {
        cause,
      },
    );
  }
}

/**
 * Sets `mode` on `path` unless it already has it (so a read-only directory that is already
 * private reports "not writable" rather than a chmod failure); `fail` wraps a chmod error.
 */
export function securePrivate(path: string, mode: number, fail: (cause: unknown) => Error): void {
  try {
    if (((Deno.statSync(path).mode ?? 0) & 0o777) !== mode) Deno.chmodSync(path, mode);
  } catch (cause) {
    throw fail(cause);
  }
}

/**
 * Throws StartupError(`message: cause`) unless a file can be created and removed in `dir`. A
 * full disk passes: the directory is writable, and what needs space says so when it writes.
 */
export function assertWritable(dir: string, message: string): void {
  const probe = `${dir}/.write-probe-${Deno.pid}`;
  try {
    Deno.writeFileSync(probe, new Uint8Array(), { mode: 0o600 });
    Deno.removeSync(probe);
  } catch (cause) {
    if (diskFullError(cause) !== undefined) return;
    throw new StartupError(`${message}: ${errText(cause)}`, undefined, { cause });
  }
}

/** `Deno.statSync`, with a StartupError naming `what` when the path cannot be inspected. */
export function statOrThrow(path: string, what: string): Deno.FileInfo {
  try {
    return Deno.statSync(path);
  } catch (cause) {
    throw new StartupError(`Cannot inspect ${what} ${path}: ${errText(cause)}`, undefined, {
      cause,
    });
  }
}

/** The message of an error, or its string form. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
