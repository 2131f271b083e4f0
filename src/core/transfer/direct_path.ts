/**
 * The seam for the direct path between two gateways (issue 17 §3, docs/transfer.md#direct-path).
 * The transfer manager offers each new outgoing transfer to the strategy first; one that takes it
 * reports `path: "direct"` in its events and hands it back to relay parts when it cannot finish.
 */
import type { P2pEndpoint } from "../../transport/p2p/mod.ts";

/** What the QUIC strategy needs of the process's endpoint (docs/p2p.md). */
export type DirectEndpoint = Pick<P2pEndpoint, "offer" | "accept">;

/** What a direct strategy is offered: an outgoing transfer already recorded. */
export interface DirectOffer {
  readonly transferId: string;
  readonly msgId: number;
  readonly chatId: number;
  /** The message's blob (the file's bytes, a `.prv`'s ciphertext). */
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
  readonly recipients: readonly string[];
}

/** How a strategy gives a transfer it took back to relay parts. */
export interface DirectHooks {
  /**
   * Relay parts carry the transfer from now on. `byRequest`: the receiver may hold some of the
   * file already, so no part goes out until it asks for the ones it misses; otherwise every part
   * goes out as for a transfer never offered.
   */
  fallback(byRequest: boolean): void;
}

/** A way to move a transfer's bytes without the relay. */
export interface DirectPath {
  /**
   * Tries to deliver `offer` directly; resolves true when it took the transfer (and then reports
   * its own progress, and calls `hooks.fallback` if it cannot finish), false to let relay parts
   * carry it.
   */
  offer(offer: DirectOffer, hooks: DirectHooks): Promise<boolean>;
  /** Stops a transfer it took: cancelled, ended, or the receiver asked for relay parts. */
  drop?(transferId: string): void;
}

/** No direct path: relay parts carry everything. */
export const NO_DIRECT_PATH: DirectPath = { offer: () => Promise.resolve(false) };
