/**
 * Error classes with stable codes. Domain code throws these; `rpc/dispatch.ts` maps them to
 * JSON-RPC errors in one place, and the daemon maps start-up errors to an exit message.
 */
import { RpcCode } from "./constants.ts";

/** Base class: a message that says what failed and why, a JSON-RPC code, and an optional cause. */
export class GatewayError extends Error {
  readonly code: number;
  constructor(message: string, code: number = RpcCode.APPLICATION, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A parameter had the wrong type, arity or value. */
export class InvalidParamsError extends GatewayError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, RpcCode.INVALID_PARAMS, options);
  }
}

/** Something asked for does not exist (chat, message, contact, file). */
export class NotFoundError extends GatewayError {}

/** A license-gated method was called without an active license (docs/contract.md §7). */
export class LicenseRequiredError extends GatewayError {
  constructor(method: string) {
    super(
      `License required: "${method}" needs an active license, but the license status is no_license. ` +
        `Activate one with: edge-gateway license activate <url>`,
      RpcCode.LICENSE_REQUIRED,
    );
  }
}

/**
 * The disk (the data directory's file system) is full: SQLite's SQLITE_FULL or a file write's
 * ENOSPC. Not the fault of the mail or the call that met it: the same work succeeds once space
 * returns. JSON-RPC -1 with a message that says so.
 */
export class DiskFullError extends GatewayError {
  constructor(detail: string, options?: ErrorOptions) {
    super(
      `the disk is full (${detail}): nothing was changed; free space in the data directory ` +
        `and try again`,
      RpcCode.APPLICATION,
      options,
    );
  }
}

/** SQLite's primary result code SQLITE_FULL ("database or disk is full"). */
const SQLITE_FULL = 13;
/**
 * SQLite's SQLITE_IOERR_SHMSIZE: the WAL index file (`-shm`) could not grow, which is what a full
 * disk does to the first read of a WAL database (its message is only "disk I/O error").
 */
const SQLITE_IOERR_SHMSIZE = 4874;

/** Whether one error (not its causes) says the disk is full. */
function saysDiskFull(err: unknown): boolean {
  if (err instanceof DiskFullError) return true;
  if (!(err instanceof Error)) return false;
  const e = err as Error & { errcode?: unknown; code?: unknown };
  // node:sqlite sets `errcode` (extended code: the primary one is its low byte).
  if (typeof e.errcode === "number" && (e.errcode & 0xff) === SQLITE_FULL) return true;
  if (e.errcode === SQLITE_IOERR_SHMSIZE) return true;
  if (e.code === "ENOSPC") return true;
  return /database or disk is full|no space left on device|os error 28|ENOSPC/i.test(e.message);
}

/**
 * The disk-full error in `err` or its cause chain, as a {@link DiskFullError} (the original
 * kept as its cause), or undefined when `err` is about something else.
 */
export function diskFullError(err: unknown): DiskFullError | undefined {
  let cur = err;
  for (let depth = 0; cur instanceof Error && depth < 5; depth++) {
    if (cur instanceof DiskFullError) return cur;
    if (saysDiskFull(cur)) {
      const detail = cur.message.replace(/\s+/g, " ").trim();
      return new DiskFullError(detail, { cause: cur });
    }
    cur = cur.cause;
  }
  return undefined;
}

/** Invalid configuration at start-up; the message names the input and the accepted form. */
export class ConfigError extends GatewayError {}

/** A fatal start-up failure (data dir, provisioning); the daemon prints it and exits non-zero. */
export class StartupError extends GatewayError {}

/**
 * Returns a readable one-line description of any thrown value, keeping the cause chain; a cause
 * whose text an outer message already quotes is not repeated.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    if (cur instanceof Error) {
      const text = cur.message;
      if (!parts.some((p) => p.includes(text))) parts.push(text);
      cur = cur.cause;
    } else {
      parts.push(String(cur));
      break;
    }
  }
  return parts.join(": ");
}
