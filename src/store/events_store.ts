/**
 * Rows of the `events` and `event_ids` tables: the SSE stream's replay tail and its id
 * reservation, written by `events/journal.ts` in batches (one commit per batch).
 */
import type { Db } from "./db.ts";

/** One stored event: its stream id and its wire object as JSON. */
export interface StoredEventRow {
  readonly id: number;
  readonly data: string;
}

/** The event log of one account's database. */
export class EventsStore {
  constructor(private readonly db: Db) {}

  /** The highest id reserved so far, and never below a stored id (0 for a new database). */
  reservedId(): number {
    const r = this.db.get<{ n: number | null }>(
      "SELECT max((SELECT coalesce(max(reserved), 0) FROM event_ids), " +
        "(SELECT coalesce(max(id), 0) FROM events)) AS n",
    );
    return r?.n ?? 0;
  }

  /** The newest `limit` events, oldest first. */
  tail(limit: number): StoredEventRow[] {
    return this.db.all<StoredEventRow>(
      "SELECT id, data FROM (SELECT id, data FROM events ORDER BY id DESC LIMIT ?) ORDER BY id",
      limit,
    ).map((r) => ({ id: r.id, data: r.data }));
  }

  /** In one commit: appends `rows`, keeps only the newest `keep` events, records `reservedId`. */
  save(rows: readonly StoredEventRow[], keep: number, reservedId: number): void {
    this.db.tx(() => {
      for (const row of rows) {
        this.db.run("INSERT OR REPLACE INTO events (id, data) VALUES (?, ?)", row.id, row.data);
      }
      if (rows.length > 0) {
        this.db.run(
          "DELETE FROM events WHERE id < (SELECT min(id) FROM " +
            "(SELECT id FROM events ORDER BY id DESC LIMIT ?))",
          keep,
        );
      }
      this.db.run(
        "INSERT INTO event_ids (singleton, reserved) VALUES (1, ?) " +
          "ON CONFLICT(singleton) DO UPDATE SET reserved = excluded.reserved",
        reservedId,
      );
    });
  }
}
