/**
 * The split content key (docs/prv-format.md, Split key): CEK = S1 xor S2, with a fresh random S1
 * per recipient, so each share alone is uniformly random and says nothing about the CEK.
 */
import { CEK_SIZE } from "./prv_crypto.ts";

/** The two shares of one recipient. */
export interface KeyShares {
  /** Travels to the recipient once, in its `otk_pdu` (stored there). */
  readonly s1: Uint8Array;
  /** Released by the owner only in a time-limited `grant` (held in memory there). */
  readonly s2: Uint8Array;
}

/** Byte-wise xor of two equal-length arrays. */
export function xorBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength !== b.byteLength) {
    throw new RangeError(`key shares differ in length (${a.byteLength} and ${b.byteLength})`);
  }
  const out = new Uint8Array(a.byteLength);
  for (let i = 0; i < a.byteLength; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** A fresh pair of shares of `cek` for one recipient. */
export function splitKey(cek: Uint8Array): KeyShares {
  if (cek.byteLength !== CEK_SIZE) throw new RangeError(`a CEK is ${CEK_SIZE} bytes`);
  const s1 = crypto.getRandomValues(new Uint8Array(CEK_SIZE));
  return { s1, s2: xorBytes(cek, s1) };
}

/** The CEK from a recipient's shares. */
export function joinShares(s1: Uint8Array, s2: Uint8Array): Uint8Array {
  return xorBytes(s1, s2);
}

/** The owner's S2 of a recipient, from the CEK and that recipient's stored S1. */
export function secondShare(cek: Uint8Array, s1: Uint8Array): Uint8Array {
  return xorBytes(cek, s1);
}
