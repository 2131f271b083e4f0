/**
 * Stop signals and the shutdown deadline: the first SIGTERM/SIGINT starts the shutdown, every
 * later one is logged and ignored (a process group stop delivers it twice), and a shutdown that
 * outlasts its deadline ends with the names of the steps still running.
 */
import { logger } from "./log.ts";

const log = logger("daemon");

/** The signals that stop the daemon. */
export const STOP_SIGNALS: readonly Deno.Signal[] = ["SIGTERM", "SIGINT"];

/** How long a shutdown may take before the daemon gives up on it and exits 1 (ms). */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/** The signal API (tests inject one). */
export interface SignalApi {
  add(signal: Deno.Signal, handler: () => void): void;
  remove(signal: Deno.Signal, handler: () => void): void;
}

const denoSignals: SignalApi = {
  add: (s, h) => Deno.addSignalListener(s, h),
  remove: (s, h) => Deno.removeSignalListener(s, h),
};

/** Listens for stop signals until `close()`; `first` resolves with the first one. */
export class StopSignals {
  readonly first: Promise<Deno.Signal>;
  #received = 0;
  readonly #handlers: [Deno.Signal, () => void][];

  constructor(private readonly api: SignalApi = denoSignals) {
    const { promise, resolve } = Promise.withResolvers<Deno.Signal>();
    this.first = promise;
    this.#handlers = STOP_SIGNALS.map((sig) => {
      const handler = () => {
        if (this.#received++ === 0) {
          log.info(`received ${sig}; shutting down`);
          resolve(sig);
        } else {
          log.info(`received ${sig} again; the shutdown already under way continues`);
        }
      };
      api.add(sig, handler);
      return [sig, handler];
    });
  }

  /** Signals received so far. */
  get received(): number {
    return this.#received;
  }

  /** Stops listening (after the shutdown has finished). */
  close(): void {
    for (const [sig, handler] of this.#handlers) this.api.remove(sig, handler);
  }
}

/** How a shutdown ended. */
export type ShutdownOutcome =
  | { readonly finished: true }
  | { readonly finished: false; readonly running: readonly string[] };

/**
 * Waits for `stop` until `deadline` resolves; then answers which steps (`unfinished()`) were
 * still running. A `stop` that rejects counts as finished (its error is logged).
 */
export async function finishShutdown(
  stop: Promise<void>,
  deadline: Promise<void>,
  unfinished: () => readonly string[],
): Promise<ShutdownOutcome> {
  const done = stop.then(
    () => true,
    (err) => {
      log.error("shutdown step failed", { error: String(err) });
      return true;
    },
  );
  const finished = await Promise.race([done, deadline.then(() => false)]);
  return finished ? { finished: true } : { finished: false, running: unfinished() };
}

/** A deadline `ms` from now, and a way to cancel its timer. */
export function deadlineIn(ms: number): { readonly reached: Promise<void>; cancel(): void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  const timer = setTimeout(resolve, ms);
  return { reached: promise, cancel: () => clearTimeout(timer) };
}
