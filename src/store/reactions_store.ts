/**
 * Rows of the `reactions` table: the reaction each contact (self included) has on a message.
 * A newer reaction replaces the contact's older one; an empty one removes it (Delta Chat's
 * semantics, XEP-0444 §3.2).
 */
import type { Db } from "./db.ts";

/** One contact's reaction on a message. */
export interface ReactionRecord {
  readonly contactId: number;
  /** One emoji (Delta Chat sends one per reaction mail). */
  readonly reaction: string;
  /** Unix seconds of the mail that set it. */
  readonly timestamp: number;
}

/** Reads and writes rows of the `reactions` table. */
export class ReactionsStore {
  constructor(private readonly db: Db) {}

  /**
   * Sets `contactId`'s reaction on `msgId` (empty: removes it). A reaction older than the one
   * stored is ignored. Returns true when something changed.
   */
  set(msgId: number, contactId: number, reaction: string, timestamp: number): boolean {
    const known = this.db.get<{ reaction: string; timestamp: number }>(
      "SELECT reaction, timestamp FROM reactions WHERE msg_id = ? AND contact_id = ?",
      msgId,
      contactId,
    );
    if (known !== undefined && known.timestamp > timestamp) return false;
    if (reaction === "") {
      return this.db.run(
        "DELETE FROM reactions WHERE msg_id = ? AND contact_id = ?",
        msgId,
        contactId,
      ).changes > 0;
    }
    if (known?.reaction === reaction) return false;
    this.db.run(
      "INSERT INTO reactions (msg_id, contact_id, reaction, timestamp) VALUES (?, ?, ?, ?) " +
        "ON CONFLICT (msg_id, contact_id) DO UPDATE SET reaction = excluded.reaction, " +
        "timestamp = excluded.timestamp",
      msgId,
      contactId,
      reaction,
      timestamp,
    );
    return true;
  }

  /** The reactions on a message, oldest first. */
  forMessage(msgId: number): ReactionRecord[] {
    return this.db.all<{ contact_id: number; reaction: string; timestamp: number }>(
      "SELECT contact_id, reaction, timestamp FROM reactions WHERE msg_id = ? " +
        "ORDER BY timestamp, contact_id",
      msgId,
    ).map((r) => ({ contactId: r.contact_id, reaction: r.reaction, timestamp: r.timestamp }));
  }
}
