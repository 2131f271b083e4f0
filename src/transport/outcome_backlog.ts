/**
 * Send outcomes the outbox could not record (a full disk fails the write that removes the row or
 * moves it on). The mail stays out of the sends until its outcome is written: a mail the relay
 * accepted is not sent again, one that failed is not retried in a storm.
 */

/** Outcomes waiting to be written, by outbox id, oldest first. */
export class OutcomeBacklog {
  readonly #pending = new Map<number, () => void>();

  /** How many outcomes wait. */
  get size(): number {
    return this.#pending.size;
  }

  /** Whether the outcome of mail `id` waits (its row must not be sent meanwhile). */
  has(id: number): boolean {
    return this.#pending.has(id);
  }

  /**
   * Writes the outcome of mail `id`; when that throws, keeps it for {@link retry} and hands the
   * error to `failed` (once per mail). Returns whether it was written.
   */
  record(id: number, write: () => void, failed: (err: unknown) => void): boolean {
    try {
      write();
      return true;
    } catch (err) {
      this.#pending.set(id, write);
      failed(err);
      return false;
    }
  }

  /** Writes the waiting outcomes again, oldest first, until one still fails. */
  retry(): void {
    for (const [id, write] of this.#pending) {
      try {
        write();
      } catch {
        return; // most likely the disk is still full: the rest would fail alike
      }
      this.#pending.delete(id);
    }
  }
}
