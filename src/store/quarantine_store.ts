/**
 * Rows of the `quarantined_mails` table: whole mails reception gave up retrying for a reason that
 * may pass or may be ours, kept (never pruned) until the operator retries or drops them.
 */
import type { Db } from "./db.ts";

/** A quarantined mail without its bytes (what listing shows). */
export interface QuarantinedMail {
  readonly id: number;
  /** Message-ID when it could be read from the head, else '' */
  readonly messageId: string;
  /** Why the last attempt failed. */
  readonly reason: string;
  /** Attempts made, the retries by the operator included. */
  readonly attempts: number;
  /** Bytes of the raw mail. */
  readonly size: number;
  /** Unix seconds. */
  readonly quarantinedAt: number;
}

/** A mail to quarantine. */
export interface NewQuarantinedMail {
  readonly messageId: string;
  readonly reason: string;
  readonly attempts: number;
  readonly raw: Uint8Array;
  /** Unix seconds. */
  readonly at: number;
}

interface Row {
  id: number;
  message_id: string;
  reason: string;
  attempts: number;
  size: number;
  quarantined_at: number;
}

const COLUMNS = "id, message_id, reason, attempts, size, quarantined_at";

function toRecord(r: Row): QuarantinedMail {
  return {
    id: r.id,
    messageId: r.message_id,
    reason: r.reason,
    attempts: r.attempts,
    size: r.size,
    quarantinedAt: r.quarantined_at,
  };
}

/** Reads and writes rows of the `quarantined_mails` table. */
export class QuarantineStore {
  constructor(private readonly db: Db) {}

  /** Keeps a mail whole; returns its id. */
  add(m: NewQuarantinedMail): number {
    return this.db.run(
      "INSERT INTO quarantined_mails (message_id, reason, attempts, size, quarantined_at, raw) " +
        "VALUES (?, ?, ?, ?, ?, ?)",
      m.messageId,
      m.reason,
      m.attempts,
      m.raw.byteLength,
      m.at,
      m.raw,
    ).lastId;
  }

  /** The oldest first, at most `limit`. */
  list(limit = 1000): QuarantinedMail[] {
    return this.db.all<Row>(
      `SELECT ${COLUMNS} FROM quarantined_mails ORDER BY id LIMIT ?`,
      limit,
    ).map(toRecord);
  }

  /** One row without its bytes. */
  get(id: number): QuarantinedMail | undefined {
    const r = this.db.get<Row>(`SELECT ${COLUMNS} FROM quarantined_mails WHERE id = ?`, id);
    return r === undefined ? undefined : toRecord(r);
  }

  /** The raw mail of row `id`. */
  raw(id: number): Uint8Array | undefined {
    const r = this.db.get<{ raw: Uint8Array }>(
      "SELECT raw FROM quarantined_mails WHERE id = ?",
      id,
    );
    return r === undefined ? undefined : new Uint8Array(r.raw);
  }

  /** Notes another failed attempt at row `id`; false when the row is gone (it was dropped). */
  failedAgain(id: number, reason: string): boolean {
    return this.db.run(
      "UPDATE quarantined_mails SET attempts = attempts + 1, reason = ? WHERE id = ?",
      reason,
      id,
    ).changes > 0;
  }

  /** Drops row `id`; true when it existed. */
  remove(id: number): boolean {
    return this.db.run("DELETE FROM quarantined_mails WHERE id = ?", id).changes > 0;
  }

  /** Number of mails kept. */
  count(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM quarantined_mails")?.n ?? 0;
  }
}
