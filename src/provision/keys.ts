/**
 * Step 6 of provisioning: the account's OpenPGP key. Generated once (crypto/keygen.ts) and stored;
 * every later start reuses it, so the fingerprint peers know never changes.
 */
import { generateAccountKey, type GeneratedKey } from "../crypto/keygen.ts";
import { StartupError } from "../errors.ts";
import { logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import { errText } from "./data_dir.ts";

const log = logger("provision");

/** Makes a key for an address (tests may inject a faster or failing one). */
export type KeyGenerator = (addr: string) => Promise<GeneratedKey>;

/** The fingerprint of the stored key, generating and storing one first when there is none. */
export async function ensureAccountKey(
  store: Store,
  addr: string,
  generate: KeyGenerator = generateAccountKey,
): Promise<{ fingerprint: string; created: boolean }> {
  const existing = store.keys.current();
  if (existing !== undefined) {
    log.info("account key present; skipping", { fingerprint: existing.fingerprint });
    return { fingerprint: existing.fingerprint, created: false };
  }
  let key: GeneratedKey;
  try {
    key = await generate(addr);
  } catch (cause) {
    throw new StartupError(`Cannot generate the account key: ${errText(cause)}`, undefined, {
      cause,
    });
  }
  store.keys.add(key);
  log.info("generated the account key", { fingerprint: key.fingerprint });
  return { fingerprint: key.fingerprint, created: true };
}
