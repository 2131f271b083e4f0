/**
 * A start-up write that can wait for the next start (a changed display name, a re-signed key, the
 * stored device fingerprint): on a full disk the start goes on without it and says so.
 */
import { diskFullError } from "../errors.ts";
import { logger } from "../log.ts";

const log = logger("provision");

/** Runs `write`; on a full disk logs that `what` is left for the next start and runs `fallback`. */
export async function unlessDiskFull<T>(
  what: string,
  write: () => T | Promise<T>,
  fallback: () => T | Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const full = diskFullError(err);
    if (full === undefined) throw err;
    log.warn(`the disk is full: ${what} is left for the next start`, { error: full.message });
    return await fallback();
  }
}
