/**
 * Whether the data directory's disk was last seen full, in memory only (`/health` reads it):
 * set by the database when SQLite answers SQLITE_FULL and by whoever meets ENOSPC writing a file;
 * cleared by the next write that commits. One WARN line when it fills, one INFO line when space
 * is back.
 */
import { logger } from "../log.ts";

const log = logger("disk");

/** The disk's state as `/health` names it. */
export type DiskWord = "ok" | "full";

/** The last seen state of the data directory's disk. */
export class DiskState {
  #full: string | undefined;

  /** "full" from the first failed write until a write succeeds again, else "ok". */
  get word(): DiskWord {
    return this.#full === undefined ? "ok" : "full";
  }

  /** What the failed write said, while the disk is full. */
  get detail(): string | undefined {
    return this.#full;
  }

  /** A write failed because the disk is full (`detail`: what it said). */
  noteFull(detail: string): void {
    if (this.#full === undefined) {
      log.warn("the disk is full: writes fail, messaging pauses until space returns", {
        detail,
      });
    }
    this.#full = detail;
  }

  /** A write succeeded: there is space (again). */
  noteSpace(): void {
    if (this.#full === undefined) return;
    this.#full = undefined;
    log.info("disk space is back: writes succeed again");
  }
}
