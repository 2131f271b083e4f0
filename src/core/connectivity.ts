/**
 * The live connectivity level (SPEC §3: 0 not configured, 1000 not connected, 2000 connecting,
 * 3000 working, 4000 connected), published as `ConnectivityChanged` only when it changes.
 */
import { Connectivity } from "../constants.ts";
import type { EventSink } from "../events/types.ts";

/** Reports the live mail connection state (`get_connectivity`, `/health`). */
export interface ConnectivitySource {
  /** Current level, see `Connectivity` in constants.ts. */
  level(): number;
}

/** Holds the current level; the IMAP loop sets it, `get_connectivity` and `/health` read it. */
export class ConnectivityMonitor implements ConnectivitySource {
  #level: number;

  /** Starts at `initial` (0, "not configured", unless the daemon knows better) without an event. */
  constructor(
    private readonly events: EventSink,
    initial: number = Connectivity.NOT_CONFIGURED,
  ) {
    this.#level = initial;
  }

  /** The current level. */
  level(): number {
    return this.#level;
  }

  /** Sets the level; publishes `{kind: "ConnectivityChanged", connectivity}` only on change. */
  set(level: number): void {
    if (level === this.#level) return;
    this.#level = level;
    this.events.publish({ kind: "ConnectivityChanged", connectivity: level });
  }
}
