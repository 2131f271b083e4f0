/**
 * Opens the gateway's SQLite database (Deno's built-in `node:sqlite`) in WAL mode and applies
 * migrations. This directory is the only place that imports `node:sqlite`.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { diskFullError } from "../errors.ts";
import { logger } from "../log.ts";
import { DiskState } from "./disk_state.ts";
import { MIGRATIONS } from "./migrations.ts";

const log = logger("store");

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
  readonly #path: string;
  /**
   * Opened on a full disk, where SQLite cannot create the WAL index file (`-shm`): the index is
   * kept in this process's memory (exclusive locking) until space returns, then the database is
   * opened again the usual way (other processes may read it again).
   */
  #indexInMemory = false;

  /**
   * Opens (and migrates) `path`; `readOnly` opens an existing database as it is, for reading;
   * `disk` is told when a write finds the disk full and when writes succeed again.
   */
  constructor(
    path: string,
    options: { readonly readOnly?: boolean; readonly disk?: DiskState } = {},
  ) {
    this.disk = options.disk ?? new DiskState();
    this.#path = path;
    try {
      if (options.readOnly === true) this.#openReadOnly();
      else this.#openOnAnyDisk();
    } catch (err) {
      throw this.#fail(err);
    }
    if (options.readOnly === true) return;
    try {
      migrate(this);
    } catch (err) {
      this.close(); // a migration a full disk kept out: the caller says so, nothing stays open
      throw err;
    }
  }

  #openReadOnly(): void {
    this.#db = new DatabaseSync(this.#path, { readOnly: true });
    this.#db.exec("PRAGMA busy_timeout = 5000");
  }

  /**
   * Opens for writing; on a full disk that leaves no room for the WAL index file, opens with the
   * index in memory instead (reads work, writes fail as SQLITE_FULL until space returns).
   */
  #openOnAnyDisk(): void {
    try {
      this.#open(false);
      return;
    } catch (err) {
      if (diskFullError(err) === undefined) throw err;
      this.disk.noteFull(`no room for the database's WAL index file ${this.#path}-shm`);
    }
    this.#open(true);
    this.#indexInMemory = true;
    log.warn(
      "the disk is full: the database is open for this process only until space returns",
      { path: this.#path },
    );
  }

  /** Opens and sets up a connection; it becomes this Db's only once all of that worked. */
  #open(indexInMemory: boolean): void {
    const db = new DatabaseSync(this.#path);
    try {
      // Before the first read: exclusive locking keeps the WAL index in memory, no -shm file.
      if (indexInMemory) db.exec("PRAGMA locking_mode = EXCLUSIVE");
      // A statement, not exec(): only a statement's error carries SQLite's code (a full disk
      // fails this first read as SQLITE_IOERR_SHMSIZE, which errors.ts knows).
      db.prepare("PRAGMA journal_mode = WAL").get();
      // FULL: every commit is on disk before it returns. Edge boxes lose power; a message is
      // deleted from the relay (or `send_msg` answers) only after its commit, so NORMAL's window
      // (the last commits lost on power failure, WAL not yet synced) would lose accepted mail.
      db.exec("PRAGMA synchronous = FULL");
      db.exec("PRAGMA foreign_keys = ON");
      db.exec("PRAGMA busy_timeout = 5000");
    } catch (err) {
      db.close();
      throw err;
    }
    this.#db = db;
  }

  /**
   * A write committed: there is space. A database opened with its WAL index in memory is opened
   * again the usual way (when that still fails, it stays as it is).
   */
  #spaceBack(): void {
    this.disk.noteSpace();
    if (!this.#indexInMemory || this.#depth > 0 || this.#closed) return;
    this.#cache.clear();
    this.#db.close(); // an exclusive lock: the usual open must not find it held
    try {
      this.#open(false);
      this.#indexInMemory = false;
      log.info("disk space is back: the database is shared again", { path: this.#path });
      return;
    } catch {
      // no room for the index file yet
    }
    try {
      this.#open(true); // as before; the next write tries again
    } catch (err) {
      log.error("cannot open the database again", { path: this.#path, error: String(err) });
    }
  }

  /**
   * Whether a write commits now (it rewrites the schema version, changing nothing): a full disk
   * notes itself, space notes that it is back. For the watch that ends a full-disk pause.
   */
  probeSpace(): boolean {
    try {
      this.tx(() => {
        const v = this.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
        this.exec(`PRAGMA user_version = ${v}`);
        this.#wrote = true;
      });
      return true;
    } catch (err) {
      if (diskFullError(err) === undefined) throw err;
      return false;
    }
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
      else this.#spaceBack();
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
    let out: T;
    try {
      out = fn();
      this.#db.exec("COMMIT");
    } catch (err) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw this.#fail(err);
    } finally {
      this.#depth--;
    }
    if (this.#wrote) this.#spaceBack();
    return out;
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
