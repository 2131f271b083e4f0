/**
 * Creates the account's OpenPGP key in Delta Chat's shape: a v4 Ed25519 (legacy EdDSA) signing
 * primary key with a Curve25519 (legacy ECDH) encryption subkey, the user ID `<addr>` and a
 * direct-key signature naming `addr` as the owner's relay (key_relays.ts).
 */
import * as openpgp from "openpgp";
import { withKeyRelays } from "./key_relays.ts";

/** A freshly generated key pair as it is stored. */
export interface GeneratedKey {
  /** Upper-case hex, as Delta Chat writes it. */
  readonly fingerprint: string;
  /** Armored private key (unencrypted: the data directory is the protection; never logged). */
  readonly privateKey: string;
  /**
   * Binary transferable public key: exactly the Autocrypt `keydata` (6 packets: 6, 2 the direct
   * key signature, 13, 2, 14, 2).
   */
  readonly publicKey: Uint8Array;
}

/**
 * Generates the key for `addr`. These are OpenPGP.js 6's defaults, spelled out so that a library
 * upgrade cannot silently change the shape: v4 keys (`config.v6Keys` stays off) and the legacy
 * curve ids that Autocrypt Level 1 peers and every Delta Chat version read (docs/protocol-notes.md
 * §2, §11). The relay notation lists the address lower-cased, as our invites write it.
 */
export async function generateAccountKey(
  addr: string,
  createdAt: Date = new Date(),
): Promise<GeneratedKey> {
  const { privateKey: bare } = await openpgp.generateKey({
    type: "ecc",
    curve: "ed25519Legacy",
    userIDs: [{ email: addr }],
    date: createdAt,
    format: "object",
  });
  return storedForm(await withKeyRelays(bare, [addr.toLowerCase()], createdAt));
}

/**
 * How far a new key's creation time lies before the clocks it is taken from: a peer whose clock
 * runs behind by less than this can encrypt to the key at once (OpenPGP implementations, Delta
 * Chat's among them, refuse a key made in their future).
 */
export const KEY_BACKDATE_MS = 24 * 3600 * 1000;

/**
 * The creation time of a key made now: the earlier of this device's clock and the relay's (from
 * its registration answer, when there is one), less {@link KEY_BACKDATE_MS}, in whole seconds. A
 * device that first boots with its clock ahead so does not make a key "from the future".
 */
export function keyCreationTime(nowMs: number, relayTimeMs?: number): Date {
  const earliest = Math.min(nowMs, relayTimeMs ?? nowMs) - KEY_BACKDATE_MS;
  return new Date(Math.floor(earliest / 1000) * 1000);
}

/** The key as the store keeps it: fingerprint, armored private key, Autocrypt keydata. */
export function storedForm(privateKey: openpgp.PrivateKey): GeneratedKey {
  return {
    fingerprint: privateKey.getFingerprint().toUpperCase(),
    privateKey: privateKey.armor(),
    publicKey: privateKey.toPublic().write(),
  };
}
