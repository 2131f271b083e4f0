/** Key/value account settings (address, credentials, server parameters, display name). */
import type { Db } from "./db.ts";

/** Known configuration keys. Credentials stay in the database and are never logged. */
export const ConfigKey = {
  ADDR: "addr",
  MAIL_PASSWORD: "mail_pw",
  DISPLAY_NAME: "displayname",
  SERVER_PARAMS: "server_params",
  CONFIGURED_AT: "configured_at",
  /** The latest wall-clock time (ms) the license check saw; never decreases. */
  LICENSE_CLOCK_HIGH_WATER: "license_clock_high_water",
  /** JSON map: license id → issue time (ms) of the latest copy deactivated here. */
  LICENSE_DEACTIVATED: "license_deactivated",
  /** This installation's id, 32 hex digits (migration 15; docs/identity.md). */
  INSTALLATION_ID: "installation_id",
  /** This installation's secret, 64 hex digits (migration 15); never logged, never sent. */
  INSTALLATION_SECRET: "installation_secret",
  /** The machine id of the last start (a different one at start: the installation moved). */
  MACHINE_ID_LAST_SEEN: "machine_id_last_seen",
  /** JSON `{from, at, reason}` of a move not yet settled by a license activation. */
  INSTALLATION_MOVED: "installation_moved",
  /**
   * The largest mail in bytes the relay accepts, as its SMTP SIZE extension (RFC 1870) last said;
   * absent while unknown. Read it through `relayMessageLimit` (relay_limit.ts).
   */
  MAX_MESSAGE_BYTES: "max_message_bytes",
  /** Quiet time (ms) after which a receiver asks for missing relay parts (docs/transfer.md). */
  TRANSFER_REQUEST_AFTER_MS: "transfer_request_after_ms",
} as const;
export type ConfigKey = typeof ConfigKey[keyof typeof ConfigKey];

/**
 * Reads and writes rows of the `config` table, with a write-through cache: only this process
 * writes the database (it holds the data-directory lock), and a SQLite read per `get_config`
 * would cost more than the rest of the request.
 */
export class ConfigStore {
  readonly #cache = new Map<string, string | undefined>();

  constructor(private readonly db: Db) {}

  get(key: ConfigKey): string | undefined {
    if (this.#cache.has(key)) return this.#cache.get(key);
    const value = this.db.get<{ value: string }>("SELECT value FROM config WHERE key = ?", key)
      ?.value;
    this.#cache.set(key, value);
    return value;
  }

  /**
   * Reads `key` from the database, past the cache: for operator settings written into the
   * database from outside while the daemon runs (docs/transfer.md#settings).
   */
  fresh(key: ConfigKey): string | undefined {
    const value = this.db.get<{ value: string }>("SELECT value FROM config WHERE key = ?", key)
      ?.value;
    this.#cache.delete(key);
    return value;
  }

  set(key: ConfigKey, value: string): void {
    this.db.run(
      "INSERT INTO config (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
    // After the write: a transaction that rolls back later leaves a stale entry, so drop it
    // instead of caching the new value until the write is known to be durable.
    this.#cache.delete(key);
  }

  /** Removes a key (nothing happens when it is absent). */
  delete(key: ConfigKey): void {
    this.db.run("DELETE FROM config WHERE key = ?", key);
    this.#cache.delete(key);
  }

  /** Stores a JSON value. */
  setJson(key: ConfigKey, value: unknown): void {
    this.set(key, JSON.stringify(value));
  }

  /** Reads a JSON value, or undefined when absent. */
  getJson<T>(key: ConfigKey): T | undefined {
    const raw = this.get(key);
    return raw === undefined ? undefined : JSON.parse(raw) as T;
  }
}
