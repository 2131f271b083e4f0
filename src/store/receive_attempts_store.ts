/**
 * Rows of the `receive_attempts` table: how often reception tried a mail still on the server
 * (named by INBOX's UIDVALIDITY and the UID), counted before each try, so a mail that keeps
 * failing, or kills the process while it is processed, is given up on instead of retried forever.
 */
import type { Db } from "./db.ts";

/** Rows untouched for this long are dropped (their mail left the server some other way). */
export const RECEIVE_ATTEMPT_KEEP_SECONDS = 30 * 24 * 3600;

/** Reads and writes rows of the `receive_attempts` table. */
export class ReceiveAttemptsStore {
  constructor(private readonly db: Db) {}

  /**
   * Counts an attempt at mail `key` at `now` (Unix seconds) and returns the number of attempts
   * before this one; prunes stale rows.
   */
  begin(key: string, now: number): number {
    return this.db.tx(() => {
      const before = this.attempts(key);
      this.db.run(
        "INSERT INTO receive_attempts (mail_key, attempts, updated_at) VALUES (?, 1, ?) " +
          "ON CONFLICT (mail_key) DO UPDATE SET attempts = attempts + 1, updated_at = excluded.updated_at",
        key,
        now,
      );
      this.db.run(
        "DELETE FROM receive_attempts WHERE updated_at < ?",
        now - RECEIVE_ATTEMPT_KEEP_SECONDS,
      );
      return before;
    });
  }

  /** Takes `n` counted attempts at `key` back (they failed for no fault of the mail's). */
  forgive(key: string, n = 1): void {
    this.db.run(
      "UPDATE receive_attempts SET attempts = MAX(attempts - ?, 0) WHERE mail_key = ?",
      n,
      key,
    );
  }

  /** Attempts counted for `key` (0 when none). */
  attempts(key: string): number {
    return this.db.get<{ n: number }>(
      "SELECT attempts AS n FROM receive_attempts WHERE mail_key = ?",
      key,
    )?.n ?? 0;
  }

  /** Notes why the last attempt failed. */
  failed(key: string, reason: string): void {
    this.db.run("UPDATE receive_attempts SET last_error = ? WHERE mail_key = ?", reason, key);
  }

  /** Why the last attempt failed ('' when it did not, or was not noted). */
  lastError(key: string): string {
    return this.db.get<{ e: string }>(
      "SELECT last_error AS e FROM receive_attempts WHERE mail_key = ?",
      key,
    )?.e ?? "";
  }

  /** Forgets `key` (its mail was stored, recorded or given up on). */
  clear(key: string): void {
    this.db.run("DELETE FROM receive_attempts WHERE mail_key = ?", key);
  }
}
