/**
 * Creates the account's OpenPGP key in Delta Chat's shape: a v4 Ed25519 (legacy EdDSA) signing
 * primary key with a Curve25519 (legacy ECDH) encryption subkey and the user ID `<addr>`.
 */
import * as openpgp from "openpgp";

/** A freshly generated key pair as it is stored. */
export interface GeneratedKey {
  /** Upper-case hex, as Delta Chat writes it. */
  readonly fingerprint: string;
  /** Armored private key (unencrypted: the data directory is the protection; never logged). */
  readonly privateKey: string;
  /** Binary transferable public key: exactly the Autocrypt `keydata` (5 packets: 6,13,2,14,2). */
  readonly publicKey: Uint8Array;
}

/**
 * Generates the key for `addr`. These are OpenPGP.js 6's defaults, spelled out so that a library
 * upgrade cannot silently change the shape: v4 keys (`config.v6Keys` stays off) and the legacy
 * curve ids that Autocrypt Level 1 peers and every Delta Chat version read (protocols.md §3, §11).
 */
export async function generateAccountKey(addr: string): Promise<GeneratedKey> {
  const { privateKey } = await openpgp.generateKey({
    type: "ecc",
    curve: "ed25519Legacy",
    userIDs: [{ email: addr }],
    format: "object",
  });
  return {
    fingerprint: privateKey.getFingerprint().toUpperCase(),
    privateKey: privateKey.armor(),
    publicKey: privateKey.toPublic().write(),
  };
}
