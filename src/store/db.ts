/**
 * Opens the gateway's SQLite database (Deno's built-in `node:sqlite`) in WAL mode and applies
 * migrations. This directory is the only place that imports `node:sqlite`.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { diskFullError } from "../errors.ts";
import { DiskState } from "./disk_state.ts";
import { MIGRATIONS } from "./migrations.ts";

export type SqlValue = SQLInputValue;
export type Row = Record<string, unknown>;

/** A small typed facade over `DatabaseSync` with cached statements and transactions. */
export class Db {
  #db!: DatabaseSync;
  readonly #cache = new Map<string, StatementSync>();
  #depth = 0;
  #closed = false;
  /** Whether the open transaction wrote (its commit then shows there is space). */
  #wrote = false;
  /** Whether the disk was last seen full (every SQLITE_FULL sets it; a committed write clears it). */
  readonly disk: DiskState;

  /**
   * Opens (and migrates) `path`; `readOnly` opens an existing database as it is, for reading;
   * `disk` is told when a write finds the disk full and when writes succeed again.
   */
  constructor(
    path: string,
    options: { readonly readOnly?: boolean; readonly disk?: DiskState } = {},
  ) {
    this.disk = options.disk ?? new DiskState();
    try {
      this.#open(path, options.readOnly === true);
    } catch (err) {
      throw this.#fail(err);
    }
  }

  #open(path: string, readOnly: boolean): void {
    if (readOnly) {
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

  /**
   * A failure as thrown to callers: a full disk becomes a DiskFullError (and is noted in
   * `disk`), anything else stays as it is.
   */
  #fail(err: unknown): unknown {
    const full = diskFullError(err);
    if (full === undefined) return err;
    this.disk.noteFull(describeCause(full));
    return full;
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
    let r;
    try {
      r = this.#stmt(sql).run(...params);
    } catch (err) {
      throw this.#fail(err);
    }
    const changes = Number(r.changes);
    if (changes > 0) {
      if (this.#depth > 0) this.#wrote = true;
      else this.disk.noteSpace();
    }
    return { changes, lastId: Number(r.lastInsertRowid) };
  }

  /** Returns the first row, or undefined. */
  get<T = Row>(sql: string, ...params: SqlValue[]): T | undefined {
    try {
      return this.#stmt(sql).get(...params) as T | undefined;
    } catch (err) {
      throw this.#fail(err);
    }
  }

  /** Returns all rows. */
  all<T = Row>(sql: string, ...params: SqlValue[]): T[] {
    try {
      return this.#stmt(sql).all(...params) as T[];
    } catch (err) {
      throw this.#fail(err);
    }
  }

  /** Executes one or more statements without parameters. */
  exec(sql: string): void {
    try {
      this.#db.exec(sql);
    } catch (err) {
      throw this.#fail(err);
    }
  }

  /**
   * Runs `fn` in one transaction (nested calls join the outer one); rolls back on throw. The
   * caller gets the error that failed the transaction: SQLite rolls back by itself on some
   * errors (a full disk among them), and "cannot rollback - no transaction is active" must not
   * hide why.
   */
  tx<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    this.exec("BEGIN IMMEDIATE");
    this.#depth++;
    this.#wrote = false;
    try {
      const out = fn();
      this.#db.exec("COMMIT");
      if (this.#wrote) this.disk.noteSpace();
      return out;
    } catch (err) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw this.#fail(err);
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

/** The message of the error that said the disk is full (the DiskFullError's cause). */
function describeCause(err: Error): string {
  return err.cause instanceof Error ? err.cause.message : err.message;
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
