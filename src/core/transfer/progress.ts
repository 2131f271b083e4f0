/**
 * Throttles `TransferProgress`: at most one event per transfer and direction every 250 ms and
 * per 1 % of the file, besides the last (bytes = total). Memory only; the clock is injected.
 */

/** Minimum time between two progress events of one transfer. */
export const PROGRESS_INTERVAL_MS = 250;

/** Decides which progress reports become events. */
export class ProgressThrottle {
  readonly #last = new Map<string, { t: number; bytes: number }>();

  constructor(private readonly now: () => number) {}

  /** True when a report of `bytes` of `total` for `key` should be published now. */
  due(key: string, bytes: number, total: number): boolean {
    const t = this.now();
    const last = this.#last.get(key);
    const step = Math.max(1, Math.ceil(total / 100));
    const final = bytes >= total;
    if (
      last !== undefined &&
      (last.bytes >= bytes || (!final && (t - last.t < PROGRESS_INTERVAL_MS ||
        bytes - last.bytes < step)))
    ) return false;
    this.#last.set(key, { t, bytes });
    return true;
  }

  /** Forgets a finished transfer. */
  forget(key: string): void {
    this.#last.delete(key);
  }
}
