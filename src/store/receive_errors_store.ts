/**
 * Rows of the `receive_errors` table: mails the reception pipeline could not use (undecryptable,
 * unparsable, forged), kept with a reason for diagnosis. Bounded in raw size and in row count.
 */
import type { Db } from "./db.ts";

/** Raw mails above this size are recorded without their bytes. */
export const RECEIVE_ERROR_RAW_LIMIT = 256 * 1024;
/** Only the newest this many records are kept. */
export const RECEIVE_ERROR_KEEP = 1000;

/** One recorded failure. */
export interface ReceiveErrorRecord {
  readonly id: number;
  /** Message-ID of the mail when it could be read, else '' */
  readonly messageId: string;
  readonly reason: string;
  /** Size of the raw mail in bytes. */
  readonly size: number;
  /** Unix seconds. */
  readonly receivedAt: number;
  /** The raw mail, or null when it was larger than `RECEIVE_ERROR_RAW_LIMIT`. */
  readonly raw: Uint8Array | null;
}

/** A failure to record. */
export interface NewReceiveError {
  readonly messageId?: string;
  readonly reason: string;
  /** The raw mail, or only its start when `size` says it is longer (then not kept). */
  readonly raw: Uint8Array;
  /** Size of the whole mail when `raw` is only its start (default `raw.byteLength`). */
  readonly size?: number | undefined;
}

interface Row {
  id: number;
  message_id: string;
  reason: string;
  size: number;
  received_at: number;
  raw: Uint8Array | null;
}

/** Reads and writes rows of the `receive_errors` table. */
export class ReceiveErrorsStore {
  constructor(private readonly db: Db) {}

  /** Records a failure (raw bytes only up to the limit), prunes old records, returns the id. */
  add(e: NewReceiveError): number {
    const size = Math.max(e.size ?? 0, e.raw.byteLength);
    const raw = size === e.raw.byteLength && size <= RECEIVE_ERROR_RAW_LIMIT ? e.raw : null;
    return this.db.tx(() => {
      const id = this.db.run(
        "INSERT INTO receive_errors (message_id, reason, size, raw) VALUES (?, ?, ?, ?)",
        e.messageId ?? "",
        e.reason,
        size,
        raw,
      ).lastId;
      this.db.run("DELETE FROM receive_errors WHERE id <= ?", id - RECEIVE_ERROR_KEEP);
      return id;
    });
  }

  /** The newest records first, at most `limit`. */
  list(limit = 100): ReceiveErrorRecord[] {
    return this.db.all<Row>(
      "SELECT id, message_id, reason, size, received_at, raw FROM receive_errors " +
        "ORDER BY id DESC LIMIT ?",
      limit,
    ).map((r) => ({
      id: r.id,
      messageId: r.message_id,
      reason: r.reason,
      size: r.size,
      receivedAt: r.received_at,
      raw: r.raw === null ? null : new Uint8Array(r.raw),
    }));
  }

  /** Number of records kept. */
  count(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM receive_errors")?.n ?? 0;
  }
}
