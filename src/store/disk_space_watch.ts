/**
 * Ends a full-disk pause without a restart: a small write is tried at start (so a start on a full
 * disk says so at once, not at its first write) and, while the store's disk state says full, now
 * and then (Db.probeSpace); the first that commits says space is back (`/health` says ok again, a
 * database opened on the full disk is shared again).
 */
import { logger } from "../log.ts";
import { sleep as abortableSleep } from "../sleep.ts";
import type { Db } from "./db.ts";

const log = logger("disk");

/** How often the watch tries a write while the disk is full (ms). */
export const DISK_SPACE_PROBE_MS = 5_000;

/** Seams of {@link watchDiskSpace}; tests pass a fake sleep. */
export interface DiskSpaceWatchOptions {
  readonly everyMs?: number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Runs until `signal` aborts; never rejects. */
export async function watchDiskSpace(
  db: Pick<Db, "disk" | "probeSpace">,
  signal: AbortSignal,
  options: DiskSpaceWatchOptions = {},
): Promise<void> {
  const sleep = options.sleep ?? abortableSleep;
  const every = options.everyMs ?? DISK_SPACE_PROBE_MS;
  let said = false;
  for (let start = true; !signal.aborted; start = false) {
    if (!start) await sleep(every, signal);
    if (signal.aborted || (!start && db.disk.word !== "full")) continue;
    try {
      db.probeSpace();
    } catch (err) {
      if (!said) log.warn("cannot probe the disk for space", { error: String(err) });
      said = true;
    }
  }
}
