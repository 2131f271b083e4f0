/**
 * Parsed OpenPGP public keys of peers, cached by their binary form: parsing a key costs more than
 * encrypting a short message, and every send and every verification needs one. Bounded.
 */
import type * as openpgp from "openpgp";
import { toBase64 } from "../../crypto/armor.ts";
import { readPublicKey } from "../../crypto/pgp.ts";

/** Most keys kept parsed. */
export const PEER_KEY_CACHE_SIZE = 1000;

/** A small LRU of parsed keys keyed by their bytes. */
export class PeerKeyCache {
  readonly #keys = new Map<string, openpgp.PublicKey>();

  /** The parsed key for `binary` (throws PgpError for bytes that are not a usable key). */
  async get(binary: Uint8Array): Promise<openpgp.PublicKey> {
    const id = toBase64(binary);
    const known = this.#keys.get(id);
    if (known !== undefined) {
      this.#keys.delete(id);
      this.#keys.set(id, known);
      return known;
    }
    const key = await readPublicKey(binary);
    this.#keys.set(id, key);
    if (this.#keys.size > PEER_KEY_CACHE_SIZE) {
      this.#keys.delete(this.#keys.keys().next().value!);
    }
    return key;
  }
}
