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

/**
 * `license_status`'s `reason_code` (docs/identity.md), beside the free-text reason: set only when
 * a program should act on it.
 */
export const LicenseReasonCode = {
  /** The data directory runs on another machine than at the last start; activate to re-bind. */
  INSTALLATION_MOVED: "installation_moved",
  /** Bound under this device's v1 id (an earlier build); the next sync or activate re-binds. */
  LEGACY_BINDING: "legacy_binding",
} as const;
export type LicenseReasonCode = typeof LicenseReasonCode[keyof typeof LicenseReasonCode];

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

/** The direct path over QUIC (src/transport/p2p/, docs/p2p.md): wire values and bounds. */
export const P2pWire = {
  /** ALPN of the direct file transfer; a peer announcing anything else is not spoken to. */
  ALPN: "emg-file/1",
  /** The offer and answer format version. */
  VERSION: 1,
  /** First bytes of the HELLO a connecting peer sends on its bidirectional stream. */
  MAGIC: "EMGP",
  /** HELLO role byte: the connecting peer receives the file. */
  ROLE_RECEIVER: 1,
  /** HELLO role byte: the connecting peer sends the file. */
  ROLE_SENDER: 2,
  /** The accepting peer's answer to a valid HELLO. */
  ACCEPTED: 0x01,
  /** The receiver's last byte: the whole file matched its SHA-256. */
  DONE_OK: 0x2e,
  /** The receiver's last byte: the bytes did not match the offered SHA-256. */
  DONE_BAD_HASH: 0x21,
  /** QUIC close code of a refused connection (the reason is never told to the peer). */
  CLOSE_REFUSED: 1,
  /** QUIC close code of a connection the other candidate won or the transfer ended on. */
  CLOSE_DONE: 0,
  /** Bytes of the one-time token. */
  TOKEN_BYTES: 32,
  /** Longest transfer id (UTF-8 bytes). */
  MAX_TRANSFER_ID_BYTES: 64,
  /** Most candidate addresses in an offer or answer. */
  MAX_CANDIDATES: 16,
  /** The SAN suffix of the short-lived certificate (no public CA issues for `.invalid`). */
  SERVER_NAME_SUFFIX: ".p2p.invalid",
} as const;

/** Timing and size bounds of the direct path (overridable per endpoint for tests). */
export const P2pDefaults = {
  /** How long both sides try to connect before the caller falls back to relay parts. */
  CONNECT_TIMEOUT_MS: 15_000,
  /** QUIC idle timeout: a link silent this long counts as dropped (then resume). */
  IDLE_TIMEOUT_MS: 10_000,
  /** Keep-alive so that NAT mappings stay open while a transfer waits on a slow disk. */
  KEEP_ALIVE_MS: 2_000,
  /** Connection attempts of one transfer (the first plus resumes after drops). */
  MAX_ATTEMPTS: 5,
  /** Largest size a received offer may claim (bytes): 64 GiB. */
  MAX_SIZE: 64 * 1024 ** 3,
  /** Certificate validity: under the 14 days WebTransport's serverCertificateHashes accepts. */
  CERT_VALIDITY_MS: 13 * 24 * 3600_000,
  /** A certificate with less left than this is replaced when no transfer is using it. */
  CERT_ROTATE_REMAINING_MS: 7 * 24 * 3600_000,
  /** An offer or answer is honoured this long after it is made. */
  OFFER_TTL_MS: 24 * 3600_000,
  /** Progress is reported at most this often ... */
  PROGRESS_MIN_INTERVAL_MS: 250,
  /** ... and only after this share (1 %) more of the file. */
  PROGRESS_MIN_FRACTION: 0.01,
  /** How long an accepted connection may take to send its HELLO. */
  HELLO_TIMEOUT_MS: 5_000,
  /** How long a STUN binding request waits for its answer, per try (three tries). */
  STUN_TIMEOUT_MS: 1_000,
} as const;

/**
 * Files from this size on are rendered as a stream into a spool file (the outbox row names it),
 * never held whole in memory; smaller mails are rendered in memory and kept in the outbox row.
 */
export const SPOOL_FROM_FILE_BYTES = 64 * 1024;
