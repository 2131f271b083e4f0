/** A tiny async queue: producers push, one consumer takes the next item or times out. */

export class AsyncQueue<T> {
  #items: T[] = [];
  #waiters: ((v: T | undefined) => void)[] = [];
  #closed = false;

  push(item: T): void {
    const w = this.#waiters.shift();
    if (w) w(item);
    else this.#items.push(item);
  }

  /** Whether an item is waiting (without taking it). */
  get size(): number {
    return this.#items.length;
  }

  /** The next item, or undefined when `signal` aborts or the queue closes first. */
  take(signal?: AbortSignal): Promise<T | undefined> {
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve(item);
    if (this.#closed || signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const w = (v: T | undefined) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(v);
      };
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((x) => x !== w);
        resolve(undefined);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(w);
    });
  }

  /** Takes every waiting item out (the queue stays open). */
  drain(): T[] {
    return this.#items.splice(0);
  }

  /** Ends every wait and returns what was left (for the caller to dispose of). */
  close(): T[] {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w(undefined);
    return this.#items.splice(0);
  }
}
