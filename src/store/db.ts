/**
 * Opens the gateway's SQLite database (Deno's built-in `node:sqlite`) in WAL mode and applies
 * migrations. This directory is the only place that imports `node:sqlite`.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { MIGRATIONS } from "./migrations.ts";

export type SqlValue = SQLInputValue;
export type Row = Record<string, unknown>;

/** A small typed facade over `DatabaseSync` with cached statements and transactions. */
export class Db {
  readonly #db: DatabaseSync;
  readonly #cache = new Map<string, StatementSync>();
  #depth = 0;
  #closed = false;

  /** Opens (and migrates) `path`; `readOnly` opens an existing database as it is, for reading. */
  constructor(path: string, options: { readonly readOnly?: boolean } = {}) {
    if (options.readOnly) {
      this.#db = new DatabaseSync(path, { readOnly: true });
      this.#db.exec("PRAGMA busy_timeout = 5000");
      return;
    }
    this.#db = new DatabaseSync(path);
    this.#db.exec("PRAGMA journal_mode = WAL");
    // FULL: every commit is on disk before it returns. Edge boxes lose power; a message is
    // deleted from the relay (or `send_msg` answers) only after its commit, so NORMAL's window
    // (the last commits lost on power failure, WAL not yet synced) would lose accepted mail.
    this.#db.exec("PRAGMA synchronous = FULL");
    this.#db.exec("PRAGMA foreign_keys = ON");
    this.#db.exec("PRAGMA busy_timeout = 5000");
    migrate(this);
  }

  #stmt(sql: string): StatementSync {
    let s = this.#cache.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#cache.set(sql, s);
    }
    return s;
  }

  /** Runs a statement; returns the number of changed rows and the last inserted id. */
  run(sql: string, ...params: SqlValue[]): { changes: number; lastId: number } {
    const r = this.#stmt(sql).run(...params);
    return { changes: Number(r.changes), lastId: Number(r.lastInsertRowid) };
  }

  /** Returns the first row, or undefined. */
  get<T = Row>(sql: string, ...params: SqlValue[]): T | undefined {
    return this.#stmt(sql).get(...params) as T | undefined;
  }

  /** Returns all rows. */
  all<T = Row>(sql: string, ...params: SqlValue[]): T[] {
    return this.#stmt(sql).all(...params) as T[];
  }

  /** Executes one or more statements without parameters. */
  exec(sql: string): void {
    this.#db.exec(sql);
  }

  /** Runs `fn` in one transaction (nested calls join the outer one); rolls back on throw. */
  tx<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    this.#db.exec("BEGIN IMMEDIATE");
    this.#depth++;
    try {
      const out = fn();
      this.#db.exec("COMMIT");
      return out;
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw err;
    } finally {
      this.#depth--;
    }
  }

  /** Closes the database (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cache.clear();
    this.#db.close();
  }
}

/** Applies every migration newer than `PRAGMA user_version`, each in its own transaction. */
function migrate(db: Db): void {
  const current = db.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.tx(() => {
      db.exec(MIGRATIONS[v]);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
}
