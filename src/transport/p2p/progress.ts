/** Progress throttling: a report at most every 250 ms and 1 % of the file, and at the end. */
import { P2pDefaults } from "../../constants.ts";
import type { P2pProgress } from "./types.ts";

/** Returns `report(bytes)`, which calls `emit` only when both bounds are passed (or at the end). */
export function progressThrottle(
  base: Omit<P2pProgress, "bytes">,
  emit: ((p: P2pProgress) => void) | undefined,
  now: () => number,
): (bytes: number) => void {
  if (!emit) return () => {};
  let lastAt = -Infinity, lastBytes = -1;
  const step = Math.max(1, Math.ceil(base.total * P2pDefaults.PROGRESS_MIN_FRACTION));
  return (bytes) => {
    const t = now();
    const end = bytes >= base.total && lastBytes < base.total;
    if (!end && (t - lastAt < P2pDefaults.PROGRESS_MIN_INTERVAL_MS || bytes - lastBytes < step)) {
      return;
    }
    lastAt = t;
    lastBytes = bytes;
    emit({ ...base, bytes });
  };
}
