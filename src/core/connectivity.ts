/** The live connectivity level (SPEC §3), published as `ConnectivityChanged` when it changes. */
import type { EventSink } from "../events/types.ts";
import type { ConnectivitySource } from "../services.ts";

/** Holds the current level; the IMAP loop sets it. */
export class ConnectivityMonitor implements ConnectivitySource {
  #level: number;

  constructor(private readonly events: EventSink, initial = 0) {
    this.#level = initial;
  }

  level(): number {
    return this.#level;
  }

  /** Sets the level; publishes an event only when it changed. */
  set(level: number): void {
    if (level === this.#level) return;
    this.#level = level;
    this.events.publish({ kind: "ConnectivityChanged", connectivity: level });
  }
}
