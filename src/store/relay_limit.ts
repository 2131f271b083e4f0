/** The relay's message size limit as stored in the config table (learned from SMTP SIZE). */
import { ConfigKey, type ConfigStore } from "./config_store.ts";

/** Anything holding the config store (the account's `Store`). */
export interface HasConfig {
  readonly config: ConfigStore;
}

/**
 * The largest mail in bytes the relay accepts, as learned from its SMTP `SIZE` extension at
 * provisioning and on each connection of the SMTP loop; undefined when it is not known yet or the
 * relay names no limit.
 */
export function relayMessageLimit(store: HasConfig): number | undefined {
  const raw = store.config.get(ConfigKey.MAX_MESSAGE_BYTES);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * Stores what the relay said (undefined: it names no limit, so the key is removed). Returns true
 * when the stored value changed.
 */
export function setRelayMessageLimit(store: HasConfig, bytes: number | undefined): boolean {
  if (relayMessageLimit(store) === bytes) return false;
  if (bytes === undefined) store.config.delete(ConfigKey.MAX_MESSAGE_BYTES);
  else store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(bytes));
  return true;
}
