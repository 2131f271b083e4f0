/** Rows of the `receipts` table: read receipts (MDN) received for our messages, one per reader. */
import type { Db } from "./db.ts";

/** One read receipt. */
export interface ReceiptRecord {
  readonly msgId: number;
  readonly contactId: number;
  /** Unix seconds. */
  readonly timestamp: number;
}

/** Reads and writes rows of the `receipts` table. */
export class ReceiptsStore {
  constructor(private readonly db: Db) {}

  /** Records a receipt; returns false when this contact's receipt for the message was known. */
  add(msgId: number, contactId: number, timestamp: number): boolean {
    return this.db.run(
      "INSERT INTO receipts (msg_id, contact_id, timestamp) VALUES (?, ?, ?) " +
        "ON CONFLICT DO NOTHING",
      msgId,
      contactId,
      timestamp,
    ).changes > 0;
  }

  /** Receipts of a message, oldest first. */
  forMessage(msgId: number): ReceiptRecord[] {
    return this.db.all<{ msg_id: number; contact_id: number; timestamp: number }>(
      "SELECT msg_id, contact_id, timestamp FROM receipts WHERE msg_id = ? ORDER BY timestamp",
      msgId,
    ).map((r) => ({ msgId: r.msg_id, contactId: r.contact_id, timestamp: r.timestamp }));
  }

  /** Number of receipts of a message. */
  count(msgId: number): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM receipts WHERE msg_id = ?", msgId)
      ?.n ?? 0;
  }
}
