/**
 * Rows of the `outbox` table: rendered, encrypted mails waiting for the SMTP loop, with retry
 * bookkeeping. A row survives restarts; it is removed once the relay accepted it or sending gave up.
 */
import type { Db } from "./db.ts";

/** One queued mail. */
export interface OutboxRecord {
  readonly id: number;
  /** The chat message this mail carries; 0 for mails without one (read receipts, SecureJoin). */
  readonly msgId: number;
  /** Message-ID of the mail (no angle brackets). */
  readonly rfc724Mid: string;
  /** SMTP `MAIL FROM`. */
  readonly envelopeFrom: string;
  /** SMTP `RCPT TO` addresses. */
  readonly recipients: string[];
  /** The complete mail as sent (empty when it waits in a spool file). */
  readonly raw: Uint8Array;
  /** The spool file holding the mail (a name in the spool directory), '' when `raw` holds it. */
  readonly spool: string;
  /** Failed attempts so far. */
  readonly attempts: number;
  /** Unix milliseconds before which the mail is not tried again. */
  readonly nextTryAt: number;
  readonly lastError: string;
  /** Unix seconds. */
  readonly createdAt: number;
}

/** A mail to queue. */
export interface NewOutboxMail {
  readonly msgId?: number;
  readonly rfc724Mid: string;
  readonly envelopeFrom: string;
  readonly recipients: readonly string[];
  readonly raw: Uint8Array;
  /** The spool file holding the mail instead of `raw` (store/mail_spool.ts). */
  readonly spool?: string | undefined;
  /** Unix ms; 0 (default) = due at once. */
  readonly nextTryAt?: number;
}

interface OutboxRow {
  id: number;
  msg_id: number;
  rfc724_mid: string;
  envelope_from: string;
  recipients: string;
  raw: Uint8Array;
  spool: string;
  attempts: number;
  next_try_at: number;
  last_error: string;
  created_at: number;
}

const SELECT = "SELECT id, msg_id, rfc724_mid, envelope_from, recipients, raw, spool, attempts, " +
  "next_try_at, last_error, created_at FROM outbox";

function toRecord(row: OutboxRow): OutboxRecord {
  return {
    id: row.id,
    msgId: row.msg_id,
    rfc724Mid: row.rfc724_mid,
    envelopeFrom: row.envelope_from,
    recipients: JSON.parse(row.recipients) as string[],
    raw: new Uint8Array(row.raw),
    spool: row.spool,
    attempts: row.attempts,
    nextTryAt: row.next_try_at,
    lastError: row.last_error,
    createdAt: row.created_at,
  };
}

/** Reads and writes rows of the `outbox` table. */
export class OutboxStore {
  constructor(private readonly db: Db) {}

  /** Queues a mail and returns the row id. */
  enqueue(m: NewOutboxMail): number {
    return this.db.run(
      "INSERT INTO outbox (msg_id, rfc724_mid, envelope_from, recipients, raw, spool, " +
        "next_try_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      m.msgId ?? 0,
      m.rfc724Mid,
      m.envelopeFrom,
      JSON.stringify(m.recipients),
      m.spool ? new Uint8Array(0) : m.raw,
      m.spool ?? "",
      m.nextTryAt ?? 0,
    ).lastId;
  }

  /** The row with this id, or undefined. */
  get(id: number): OutboxRecord | undefined {
    const row = this.db.get<OutboxRow>(`${SELECT} WHERE id = ?`, id);
    return row && toRecord(row);
  }

  /** Mails due at `nowMs`, oldest due first, at most `limit`. */
  due(nowMs: number, limit = 50): OutboxRecord[] {
    return this.db.all<OutboxRow>(
      `${SELECT} WHERE next_try_at <= ? ORDER BY next_try_at, id LIMIT ?`,
      nowMs,
      limit,
    ).map(toRecord);
  }

  /** When the next mail is due (Unix ms), or undefined when the queue is empty. */
  nextDueAt(): number | undefined {
    return this.db.get<{ t: number | null }>("SELECT min(next_try_at) AS t FROM outbox")?.t ??
      undefined;
  }

  /**
   * Makes rows due later than `nowMs + maxAheadMs` due at `nowMs`: times set while the wall clock
   * ran ahead would otherwise wait out its whole offset. Returns how many rows changed.
   */
  pullBack(nowMs: number, maxAheadMs: number): number {
    return this.db.run(
      "UPDATE outbox SET next_try_at = ? WHERE next_try_at > ?",
      nowMs,
      nowMs + maxAheadMs,
    ).changes;
  }

  /**
   * Keeps a failure's error and sets when to try again; `counted` (default true) adds one to
   * `attempts`, the count the SMTP loop gives a mail up by.
   */
  recordFailure(id: number, error: string, nextTryAt: number, counted = true): void {
    this.db.run(
      "UPDATE outbox SET attempts = attempts + ?, last_error = ?, next_try_at = ? WHERE id = ?",
      counted ? 1 : 0,
      error,
      nextTryAt,
      id,
    );
  }

  /** Removes a row; returns true when it existed. */
  remove(id: number): boolean {
    return this.db.run("DELETE FROM outbox WHERE id = ?", id).changes > 0;
  }

  /** The spool files queued mails name (all rows, or one message's). */
  spools(msgId?: number): string[] {
    const rows = msgId === undefined
      ? this.db.all<{ spool: string }>("SELECT spool FROM outbox WHERE spool != ''")
      : this.db.all<{ spool: string }>(
        "SELECT spool FROM outbox WHERE spool != '' AND msg_id = ?",
        msgId,
      );
    return rows.map((r) => r.spool);
  }

  /** Number of queued mails for one message. */
  countForMessage(msgId: number): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM outbox WHERE msg_id = ?", msgId)
      ?.n ?? 0;
  }

  /** Drops the queued mails of a message (it was deleted); returns how many. */
  removeForMessage(msgId: number): number {
    if (msgId === 0) return 0;
    return this.db.run("DELETE FROM outbox WHERE msg_id = ?", msgId).changes;
  }

  /** Number of queued mails whose Message-ID starts with `prefix` (a transfer's parts). */
  countByMidPrefix(prefix: string): number {
    return this.db.get<{ n: number }>(
      "SELECT count(*) AS n FROM outbox WHERE substr(rfc724_mid, 1, ?) = ?",
      prefix.length,
      prefix,
    )?.n ?? 0;
  }

  /**
   * Drops queued mails whose Message-ID starts with `prefix`; returns the spool files they named
   * (the caller removes them after the commit).
   */
  removeByMidPrefix(prefix: string): string[] {
    const spools = this.db.all<{ spool: string }>(
      "SELECT spool FROM outbox WHERE substr(rfc724_mid, 1, ?) = ? AND spool != ''",
      prefix.length,
      prefix,
    ).map((r) => r.spool);
    this.db.run("DELETE FROM outbox WHERE substr(rfc724_mid, 1, ?) = ?", prefix.length, prefix);
    return spools;
  }

  /** Number of queued mails. */
  count(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM outbox")?.n ?? 0;
  }
}
