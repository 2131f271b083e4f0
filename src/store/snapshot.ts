/**
 * A consistent copy of the account database taken while the daemon runs (`VACUUM INTO`): one
 * read transaction, so the copy holds every commit before it and none after, and the copy is a
 * standalone, compacted database file.
 */
import type { Db } from "./db.ts";
import type { EventsStore } from "./events_store.ts";

/** What the snapshot holds besides its file. */
export interface SnapshotFacts {
  /** The SSE journal's position (the highest event id reserved) when the snapshot was taken. */
  readonly journalPosition: number;
  /** The schema version (`PRAGMA user_version`) of the copy. */
  readonly schemaVersion: number;
}

/**
 * Writes a snapshot of `store` to `path` (which must not exist; created 0600 by its caller's
 * umask rules: the caller removes it when done). Synchronous, so nothing commits in between the
 * journal position read and the copy.
 */
export function snapshotDatabase(
  store: { readonly db: Db; readonly events: EventsStore },
  path: string,
): SnapshotFacts {
  const journalPosition = store.events.reservedId();
  const schemaVersion =
    store.db.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
  store.db.exec(`VACUUM INTO '${path.replaceAll("'", "''")}'`);
  return { journalPosition, schemaVersion };
}
