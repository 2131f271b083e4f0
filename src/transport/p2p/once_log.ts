/** Refusals are logged once per transfer and reason, so a hostile peer cannot flood the log. */
import { type Logger, logger } from "../../log.ts";

/** The refusals the direct path logs. */
export type P2pRefusal =
  | "forged_offer"
  | "size_limit"
  | "expired"
  | "wrong_pin"
  | "wrong_token"
  | "unknown_transfer"
  | "bad_hello";

const MAX_REMEMBERED = 4096;

/**
 * Refusals a stranger can cause with made-up transfer ids: logged once per endpoint, not per id,
 * so that varying the id does not flood the log.
 */
const PER_ENDPOINT: ReadonlySet<P2pRefusal> = new Set(["unknown_transfer", "bad_hello"]);

/**
 * A logger that writes each (reason, transfer) pair once (each reason once when strangers can vary
 * the transfer id); `counts` tells how often each came.
 */
export class OnceLog {
  readonly counts = new Map<P2pRefusal, number>();
  #seen = new Set<string>();
  #log: Logger;

  constructor(log: Logger = logger("p2p")) {
    this.#log = log;
  }

  refuse(reason: P2pRefusal, transferId: string, detail?: string): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const key = PER_ENDPOINT.has(reason) ? reason : `${reason}\n${transferId}`;
    if (this.#seen.has(key)) return;
    if (this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
    this.#seen.add(key);
    this.#log.warn(`direct transfer refused: ${reason}`, {
      transfer_id: transferId.slice(0, 64),
      ...(detail ? { detail } : {}),
    });
  }
}
