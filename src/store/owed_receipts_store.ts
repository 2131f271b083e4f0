/**
 * Rows of the `owed_receipts` table: receipts (MDNs) the gateway still has to send, kept until
 * the rendered receipt mail sits in the outbox, so a crash in between loses none.
 */
import type { Db } from "./db.ts";

/** `displayed`: a read receipt; `processed`: the gateways' automatic delivery receipt. */
export type ReceiptKind = "displayed" | "processed";

/** One owed receipt. */
export interface OwedReceipt {
  readonly id: number;
  readonly contactId: number;
  /** Message-ID of the peer's message (no angle brackets). */
  readonly rfc724Mid: string;
  readonly kind: ReceiptKind;
}

/** Reads and writes rows of the `owed_receipts` table. */
export class OwedReceiptsStore {
  constructor(private readonly db: Db) {}

  /** Records an owed receipt; the same one twice is stored once. */
  add(contactId: number, rfc724Mid: string, kind: ReceiptKind): void {
    this.db.run(
      "INSERT OR IGNORE INTO owed_receipts (contact_id, rfc724_mid, kind) VALUES (?, ?, ?)",
      contactId,
      rfc724Mid,
      kind,
    );
  }

  /** Every owed receipt, oldest first, at most `limit`. */
  list(limit = 10_000): OwedReceipt[] {
    return this.db.all<{ id: number; contact_id: number; rfc724_mid: string; kind: ReceiptKind }>(
      "SELECT id, contact_id, rfc724_mid, kind FROM owed_receipts ORDER BY id LIMIT ?",
      limit,
    ).map((r) => ({ id: r.id, contactId: r.contact_id, rfc724Mid: r.rfc724_mid, kind: r.kind }));
  }

  /** Removes rows once their receipt mail is queued (or can never be sent). */
  remove(ids: readonly number[]): void {
    for (const id of ids) this.db.run("DELETE FROM owed_receipts WHERE id = ?", id);
  }

  /** Number of owed receipts. */
  count(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM owed_receipts")?.n ?? 0;
  }
}
