/**
 * Creates the account's OpenPGP key in Delta Chat's shape: a v4 Ed25519 (legacy EdDSA) signing
 * primary key with a Curve25519 ECDH encryption subkey and the user ID `<addr>`.
 */
import * as openpgp from "openpgp";

/** A freshly generated key pair as it is stored. */
export interface GeneratedKey {
  /** Upper-case hex, as Delta Chat writes it. */
  readonly fingerprint: string;
  /** Armored private key (unencrypted: the data directory is the protection; never logged). */
  readonly privateKey: string;
  /** Binary transferable public key: exactly the Autocrypt `keydata`. */
  readonly publicKey: Uint8Array;
}

/** Generates the key for `addr` with OpenPGP.js defaults (the Autocrypt Level 1 shape). */
export async function generateAccountKey(addr: string): Promise<GeneratedKey> {
  const { privateKey } = await openpgp.generateKey({
    userIDs: [{ email: addr }],
    format: "object",
  });
  return {
    fingerprint: privateKey.getFingerprint().toUpperCase(),
    privateKey: privateKey.armor(),
    publicKey: privateKey.toPublic().write(),
  };
}
