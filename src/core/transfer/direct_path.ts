/**
 * The seam for the direct path between two gateways (issue 17 §3, QUIC: another branch). The
 * transfer manager asks the strategy first; until one is wired in, every transfer takes relay
 * parts. A strategy that takes a transfer reports `path: "direct"` in its events.
 */

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

/** A way to move a transfer's bytes without the relay. */
export interface DirectPath {
  /**
   * Tries to deliver `offer` directly; resolves true when it took the transfer (and then reports
   * its own progress), false to let relay parts carry it.
   */
  offer(offer: DirectOffer): Promise<boolean>;
}

/** No direct path: relay parts carry everything. */
export const NO_DIRECT_PATH: DirectPath = { offer: () => Promise.resolve(false) };
