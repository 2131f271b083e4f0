/**
 * Step 6 of provisioning: the account's OpenPGP key. Generated once (crypto/keygen.ts) and stored;
 * every later start reuses it, so the fingerprint peers know never changes, and re-signs it when
 * its relay notation does not name the account's address (a key from before the notation, or an
 * address that changed).
 */
import { generateAccountKey, type GeneratedKey, storedForm } from "../crypto/keygen.ts";
import { keyRelays, withKeyRelays } from "../crypto/key_relays.ts";
import { readPrivateKey } from "../crypto/pgp.ts";
import { StartupError } from "../errors.ts";
import { logger } from "../log.ts";
import type { Store, StoredKeyPair } from "../store/mod.ts";
import { errText } from "./data_dir.ts";
import { unlessDiskFull } from "./unless_disk_full.ts";

const log = logger("provision");

/**
 * Makes a key for an address, made at `createdAt` (tests may inject a faster or failing one).
 */
export type KeyGenerator = (addr: string, createdAt?: Date) => Promise<GeneratedKey>;

/**
 * The fingerprint of the stored key, generating and storing one first when there is none; a
 * stored key whose relay notation is not exactly `addr` gets it (see {@link ensureKeyRelays}).
 */
export async function ensureAccountKey(
  store: Store,
  addr: string,
  generate: KeyGenerator = generateAccountKey,
  createdAt?: Date,
): Promise<{ fingerprint: string; created: boolean }> {
  const existing = store.keys.current();
  if (existing !== undefined) {
    log.info("account key present; skipping generation", { fingerprint: existing.fingerprint });
    await unlessDiskFull(
      "re-signing the account key with its relay address",
      () => ensureKeyRelays(store, existing, addr),
      () => false,
    );
    return { fingerprint: existing.fingerprint, created: false };
  }
  let key: GeneratedKey;
  try {
    key = await generate(addr, createdAt);
  } catch (cause) {
    throw new StartupError(`Cannot generate the account key: ${errText(cause)}`, undefined, {
      cause,
    });
  }
  store.keys.add(key);
  log.info("generated the account key", { fingerprint: key.fingerprint });
  return { fingerprint: key.fingerprint, created: true };
}

/**
 * Makes the key's `relays@chatmail.at` notation list exactly `addr` (lower-cased, as invites
 * write it), so that Delta Chat sends to that address and takes the SecureJoin shortcut with a
 * key it already has. A key already naming it is left alone; otherwise the key is re-signed by
 * its primary key (same fingerprint) and both halves are stored back in one statement. Returns
 * whether the key changed.
 */
export async function ensureKeyRelays(
  store: Store,
  pair: StoredKeyPair,
  addr: string,
): Promise<boolean> {
  const relays = [addr.toLowerCase()];
  let updated: GeneratedKey;
  try {
    const key = await readPrivateKey(pair.privateKey);
    const current = await keyRelays(key);
    if (current !== undefined && current.join(",") === relays.join(",")) return false;
    updated = storedForm(await withKeyRelays(key, relays));
  } catch (cause) {
    throw new StartupError(
      `Cannot add the relay address to the account key: ${errText(cause)}`,
      undefined,
      { cause },
    );
  }
  if (!store.keys.replaceCurrent(updated)) {
    throw new StartupError("Cannot store the re-signed account key: the key in use changed");
  }
  log.info("account key re-signed to name its relay address", {
    fingerprint: pair.fingerprint,
    relay: relays[0],
  });
  return true;
}
