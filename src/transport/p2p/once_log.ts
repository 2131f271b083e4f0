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

/** A logger that writes each (reason, transfer) pair once; `counts` tells how often each came. */
export class OnceLog {
  readonly counts = new Map<P2pRefusal, number>();
  #seen = new Set<string>();
  #log: Logger;

  constructor(log: Logger = logger("p2p")) {
    this.#log = log;
  }

  refuse(reason: P2pRefusal, transferId: string, detail?: string): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const key = `${reason}\n${transferId}`;
    if (this.#seen.has(key)) return;
    if (this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
    this.#seen.add(key);
    this.#log.warn(`direct transfer refused: ${reason}`, {
      transfer_id: transferId.slice(0, 64),
      ...(detail ? { detail } : {}),
    });
  }
}
