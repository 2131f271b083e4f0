/**
 * What a recipient holds in memory only: the S2 of each grant (never written anywhere), when the
 * owner was last asked, and the streams of each file that are running (a revoke ends them).
 */
import type { HeldGrant } from "./access_state.ts";

/** One gateway's grants and running streams, by received file id. */
export class GrantMemory {
  readonly #grants = new Map<number, HeldGrant>();
  readonly #askedAt = new Map<number, number>();
  readonly #streams = new Map<number, Set<AbortController>>();
  readonly #onDrop: ((fileId: number) => void)[] = [];

  grant(fileId: number): HeldGrant | undefined {
    return this.#grants.get(fileId);
  }

  hold(fileId: number, grant: HeldGrant): void {
    this.#grants.set(fileId, grant);
    this.#askedAt.delete(fileId);
  }

  /** Forgets the grant (zeroing S2) and the request time; tells the `onDrop` listeners. */
  drop(fileId: number): void {
    this.#grants.get(fileId)?.s2.fill(0);
    this.#grants.delete(fileId);
    this.#askedAt.delete(fileId);
    for (const listener of this.#onDrop) listener(fileId);
  }

  /** Calls `listener(fileId)` whenever a grant is dropped (what it opened must be forgotten). */
  onDrop(listener: (fileId: number) => void): void {
    this.#onDrop.push(listener);
  }

  /** When the owner was last asked for this file (Unix seconds), 0 never. */
  askedAt(fileId: number): number {
    return this.#askedAt.get(fileId) ?? 0;
  }

  asked(fileId: number, at: number): void {
    this.#askedAt.set(fileId, at);
  }

  /** Registers a running stream of the file; the signal aborts when access ends. */
  track(fileId: number): { signal: AbortSignal; done(): void } {
    const ac = new AbortController();
    const set = this.#streams.get(fileId) ?? new Set();
    set.add(ac);
    this.#streams.set(fileId, set);
    return {
      signal: ac.signal,
      done: () => {
        set.delete(ac);
        if (set.size === 0) this.#streams.delete(fileId);
      },
    };
  }

  /** Ends every running stream of the file. */
  endStreams(fileId: number, reason: string): number {
    const set = this.#streams.get(fileId);
    if (set === undefined) return 0;
    const running = [...set];
    this.#streams.delete(fileId);
    for (const ac of running) ac.abort(new Error(reason));
    return running.length;
  }
}
