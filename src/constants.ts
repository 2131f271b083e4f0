/**
 * Fixed numbers and names of the gateway's public contract (docs/contract.md) and its defaults.
 * Wire values live here once, as `as const` objects, so no module spells them itself.
 */

/** The gateway's own version, reported by `/health`, `get_info` and the CLI. */
export const GATEWAY_VERSION = "0.1.0";

/**
 * The service name `/health` reports: the product's daemon name
 * (docs/product-compat.md#health-body).
 */
export const SERVICE_NAME = "privitty-edged";

/** Version string reported as `deltachat_core_version`: the Delta Chat wire protocol we speak. */
export const CORE_COMPAT_VERSION =
  "edge-gateway-0.1.0 (chatmail wire format, Delta Chat 2.x compatible)";

/** The only account a daemon owns (docs/contract.md §1.1). */
export const ACCOUNT_ID = 1;

export const DEFAULT_PORT = 7200;
/**
 * The listen address by default: loopback only, since `/rpc` is open unless API tokens are on
 * (docs/access.md). The container image sets 0.0.0.0 (`PRIVITTY_HOST`).
 */
export const DEFAULT_HOST = "127.0.0.1";
/** Every interface: `--listen :7200`'s empty host. */
export const ALL_INTERFACES = "0.0.0.0";
export const DEFAULT_DATA_DIR = "/var/lib/privitty";
export const DEFAULT_RELAY = "nine.testrun.org";
export const DEFAULT_URL = "http://127.0.0.1:7200";

/** SSE keepalive interval (docs/contract.md §6, §8). */
export const SSE_PING_MS = 15_000;

/** Special contact ids (Delta Chat numbering). */
export const ContactId = { SELF: 1, INFO: 2, DEVICE: 5, LAST_SPECIAL: 9 } as const;

/**
 * Message states as the contract numbers them (docs/contract.md §3.1); 16 (seen) is our extension
 * for incoming read messages.
 */
export const MessageState = {
  FRESH: 1,
  PENDING: 10,
  SEEN: 16,
  FAILED: 24,
  DELIVERED_TO_SERVER: 20,
  DELIVERED_TO_DEVICE: 26,
  READ: 28,
} as const;
export type MessageState = typeof MessageState[keyof typeof MessageState];

/** Chat types as the contract numbers them (docs/contract.md §2). */
export const ChatType = { SINGLE: 100, GROUP: 120, BROADCAST: 130 } as const;
export type ChatType = typeof ChatType[keyof typeof ChatType];

/** Connectivity levels (docs/contract.md §3.2): 0 not configured, then Delta Chat's bands. */
export const Connectivity = {
  NOT_CONFIGURED: 0,
  NOT_CONNECTED: 1000,
  CONNECTING: 2000,
  WORKING: 3000,
  CONNECTED: 4000,
} as const;

/** JSON-RPC error codes used by the gateway (JSON-RPC 2.0 standard ones, plus ours). */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  LICENSE_REQUIRED: -32001,
  /** A server limit was reached (the batch answer size); the member was not run. */
  LIMIT_REACHED: -32000,
  /** No valid API token while tokens are on: the body of the HTTP 401 (docs/access.md). */
  UNAUTHORIZED: -32002,
  /** The API token lacks the method's scope (docs/access.md#scopes); the method was not run. */
  FORBIDDEN: -32003,
  /** Application errors, Delta Chat convention. */
  APPLICATION: -1,
} as const;

/**
 * License status values: `no_license` is the contract's (docs/contract.md §3.4),
 * `active`/`grace_period`/`expired` the product's; `clock_tampered` and `invalid` say why a present
 * license is not honoured.
 */
export const LicenseStatus = {
  NO_LICENSE: "no_license",
  ACTIVE: "active",
  GRACE_PERIOD: "grace_period",
  EXPIRED: "expired",
  CLOCK_TAMPERED: "clock_tampered",
  INVALID: "invalid",
} as const;
export type LicenseStatus = typeof LicenseStatus[keyof typeof LicenseStatus];

/** Names of files and directories inside the data directory. */
export const DataDirLayout = {
  ACCOUNTS_DIR: "accounts",
  ACCOUNTS_INDEX: "accounts/accounts.json",
  LOCK_FILE: "gateway.lock",
  /** The signed license (the product's name for it). */
  LICENSE_FILE: "privitty.lic",
  /** The unsigned license file of earlier builds: never honoured, only reported. */
  LEGACY_LICENSE_FILE: "license.json",
  DATABASE: "accounts/1/gateway.db",
  BLOB_DIR: "accounts/1/blobs",
  /** Rendered mails too large to keep in the database, waiting in the outbox (`<name>.eml`). */
  SPOOL_DIR: "accounts/1/spool",
  FILES_DIR: "files",
  MACHINE_ID: "machine-id",
  /**
   * The device fingerprint stored at start, before license activation
   * (docs/product-compat.md#start-order).
   */
  DEVICE_FINGERPRINT: "device-fingerprint",
} as const;

/** Top-level entries of the data directory that hold the gateway's state (all but the files dir). */
export const DATA_DIR_STATE_ENTRIES: ReadonlySet<string> = new Set(
  Object.entries(DataDirLayout).filter(([k]) => k !== "FILES_DIR").map(([, v]) => v.split("/")[0]),
);

/**
 * Files from this size on are rendered as a stream into a spool file (the outbox row names it),
 * never held whole in memory; smaller mails are rendered in memory and kept in the outbox row.
 */
export const SPOOL_FROM_FILE_BYTES = 64 * 1024;
