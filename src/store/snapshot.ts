/**
 * A consistent copy of the account database taken while the daemon runs: SQLite's online backup
 * from a read-only connection of its own, all pages in one step (one read transaction, on a
 * worker thread), so the copy holds every commit before it and none after while the daemon
 * keeps writing. `VACUUM INTO` is not used: Deno allows no ATTACH under a permission set.
 */
import { backup, DatabaseSync } from "node:sqlite";
import { Db } from "./db.ts";
import { EventsStore } from "./events_store.ts";

/** What the snapshot holds besides its file. */
export interface SnapshotFacts {
  /** The SSE journal's position (the highest event id reserved) in the copy. */
  readonly journalPosition: number;
  /** The schema version (`PRAGMA user_version`) of the copy. */
  readonly schemaVersion: number;
}

/**
 * Copies the database at `sourcePath` to `targetPath` (which must not exist; the caller removes
 * it when done) as one self-contained file (rollback journal, no `-wal`), and reads its facts.
 */
export async function snapshotDatabase(
  sourcePath: string,
  targetPath: string,
): Promise<SnapshotFacts> {
  const source = new DatabaseSync(sourcePath, { readOnly: true });
  try {
    source.exec("PRAGMA busy_timeout = 5000");
    await backup(source, targetPath, { rate: -1 });
  } finally {
    source.close();
  }
  const copy = new DatabaseSync(targetPath);
  try {
    copy.exec("PRAGMA journal_mode = DELETE");
  } finally {
    copy.close();
  }
  const db = new Db(targetPath, { readOnly: true });
  try {
    return {
      journalPosition: new EventsStore(db).reservedId(),
      schemaVersion: db.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0,
    };
  } finally {
    db.close();
  }
}
