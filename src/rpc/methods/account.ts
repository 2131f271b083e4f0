/**
 * Account RPC methods: `get_config`, `get_info` and `get_connectivity` (docs/contract.md §4.4).
 * They read local state only and work without a license.
 */
import { CORE_COMPAT_VERSION, DataDirLayout, GATEWAY_VERSION } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import type { Services } from "../../services.ts";
import { ConfigKey, relayMessageLimit } from "../../store/mod.ts";
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";

/** Config keys `get_config` answers, and where each value comes from. */
const CONFIG_READERS: Record<string, (s: Services) => string | null> = {
  addr: (s) => s.store.config.get(ConfigKey.ADDR) ?? null,
  displayname: (s) => s.store.config.get(ConfigKey.DISPLAY_NAME) ?? s.config.profile ?? null,
};

/**
 * `get_config [account_id, key]` → string or null.
 * `addr` is the relay-assigned address; `displayname` the stored display name, falling back to
 * `EDGE_PROFILE`. Unknown keys → -1 listing the supported ones. No side effects, no events.
 */
export const getConfig = method({
  name: "get_config",
  scope: "read",
  summary: "Reads an account setting: addr (e-mail address) or displayname.",
  params: [
    ACCOUNT_PARAM,
    { name: "key", type: "string", description: 'Setting name: "addr" or "displayname".' },
  ],
  result: { type: "string?", description: "The value; null when it is not set." },
  handler(services, [, name]) {
    if (!Object.hasOwn(CONFIG_READERS, name)) {
      const keys = Object.keys(CONFIG_READERS).map((k) => `"${k}"`).join(", ");
      throw new GatewayError(`unknown config key "${name}": supported keys are ${keys}`);
    }
    return CONFIG_READERS[name](services);
  },
});

/** Size in bytes of the database file plus its write-ahead log (0 for a missing file). */
async function databaseBytes(path: string): Promise<number> {
  let total = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      total += (await Deno.stat(file)).size;
    } catch {
      // absent (no WAL yet, or an in-memory database): counts as 0
    }
  }
  return total;
}

/** Collects get_info's map; every value a string. */
async function collectInfo(s: Services): Promise<Record<string, string>> {
  const dbPath = `${s.config.dataDir}/${DataDirLayout.DATABASE}`;
  const pragma = (sql: string) => String(Object.values(s.store.db.get(sql) ?? {})[0] ?? "");
  return {
    deltachat_core_version: CORE_COMPAT_VERSION,
    gateway_version: GATEWAY_VERSION,
    dbsize: String(await databaseBytes(dbPath)),
    blobdir: `${s.config.dataDir}/${DataDirLayout.BLOB_DIR}`,
    configured_addr: s.store.config.get(ConfigKey.ADDR) ?? "",
    displayname: CONFIG_READERS.displayname(s) ?? "",
    n_msgs_in_db: String(s.store.countMessages()),
    database_dir: dbPath,
    journal_mode: pragma("PRAGMA journal_mode"),
    sqlite_version: pragma("SELECT sqlite_version()"),
    arch: Deno.build.arch,
    os: Deno.build.os,
    num_cpus: String(navigator.hardwareConcurrency ?? ""),
    uptime: String(Math.max(0, Math.floor((Date.now() - s.startedAt) / 1000))),
    connectivity: String(s.connectivity.level()),
    license_status: s.license.status(),
    relay: s.config.relay.host,
    fingerprint: s.store.keys.current()?.fingerprint ?? "",
    outbox_len: String(s.store.outbox.count()),
    owed_receipts: String(s.store.owedReceipts.count()),
    receive_errors: String(s.store.receiveErrors.count()),
    quarantined: String(s.store.quarantine.count()),
    ...maxMessageBytes(s),
  };
}

/** `max_message_bytes`: the relay's limit from SMTP SIZE; absent while unknown. */
function maxMessageBytes(s: Services): { max_message_bytes?: string } {
  const limit = relayMessageLimit(s.store);
  return limit === undefined ? {} : { max_message_bytes: String(limit) };
}

/**
 * `get_info [account_id]` → map of string to string.
 * Contract keys (docs/contract.md §2) `deltachat_core_version`, `dbsize` (bytes of db + WAL),
 * `blobdir`, `configured_addr`,
 * `n_msgs_in_db`, plus gateway extras (`outbox_len` mails waiting for the relay, `receive_errors`
 * mails that could not be used, `quarantined` mails kept whole after failing, versions, uptime
 * in s, connectivity, license status, relay host, own key fingerprint, `max_message_bytes` the
 * largest mail the relay accepts as its SMTP SIZE said, absent while unknown). Reads local state
 * only; no events.
 */
export const getInfo = method({
  name: "get_info",
  scope: "read",
  summary: "Technical details of the account and daemon, all values strings.",
  params: [ACCOUNT_PARAM],
  result: { type: "map<string,string>", description: "Key → value, e.g. dbsize, blobdir." },
  handler: (services) => collectInfo(services),
});

/**
 * `get_connectivity [account_id]` → integer level (docs/contract.md §3.2: 0 not configured, 1000
 * not connected, 2000 connecting, 3000 working, 4000 connected). No side effects.
 */
export const getConnectivity = method({
  name: "get_connectivity",
  scope: "read",
  summary: "Current connectivity level of the mail connection.",
  params: [ACCOUNT_PARAM],
  result: { type: "u32", description: "Level: 0, 1000-1999, 2000-2999, 3000-3999, 4000+." },
  handler: (services) => services.connectivity.level(),
});

/** The account methods, in documentation order. */
export const ACCOUNT_METHODS: readonly MethodEntry[] = [getConfig, getInfo, getConnectivity];
