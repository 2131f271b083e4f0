/**
 * The account's own identity for the wire: address, display name, fingerprint, Autocrypt keydata
 * and the parsed private key (parsed once, kept in memory; never logged).
 */
import type * as openpgp from "openpgp";
import { readPrivateKey } from "../../crypto/pgp.ts";
import { ConfigKey, type Store } from "../../store/mod.ts";

/** Who we are on the wire. */
export interface SelfIdentity {
  readonly addr: string;
  /** The configured display name ('' when none). */
  readonly name: string;
  /** Upper-case hex. */
  readonly fingerprint: string;
  /** Binary transferable public key (Autocrypt keydata). */
  readonly publicKey: Uint8Array;
  readonly privateKey: openpgp.PrivateKey;
}

/** Loads the identity from a provisioned store; throws when the account has no key yet. */
export async function loadIdentity(store: Store): Promise<SelfIdentity> {
  const pair = store.keys.current();
  const addr = store.config.get(ConfigKey.ADDR);
  if (pair === undefined || addr === undefined) {
    throw new Error("the account is not provisioned: no address or key in the store");
  }
  return {
    addr: addr.toLowerCase(),
    name: store.config.get(ConfigKey.DISPLAY_NAME) ?? "",
    fingerprint: pair.fingerprint.toUpperCase(),
    publicKey: pair.publicKey,
    privateKey: await readPrivateKey(pair.privateKey),
  };
}
