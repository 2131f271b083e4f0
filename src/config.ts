/**
 * Turns the daemon's environment variables and flags into one frozen `GatewayConfig`.
 * Pure: takes the argument list and an env reader, validates every input and names it on error.
 */
import { posix } from "node:path";
import {
  ALL_INTERFACES,
  DATA_DIR_STATE_ENTRIES,
  DataDirLayout,
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_RELAY,
  SSE_PING_MS,
} from "./constants.ts";
import { ConfigError } from "./errors.ts";
import { type LogLevel, parseLogLevel } from "./log.ts";

/** Where to register and where to look for the relay's autoconfig document. */
export interface RelayTarget {
  /** What the operator wrote, for logs. */
  readonly input: string;
  /** The mail domain guess (host name of the relay). */
  readonly host: string;
  /** URL for `POST` registration (chatmail `/new`). */
  readonly registerUrl: string;
  /** Origin whose `/.well-known/autoconfig/mail/config-v1.1.xml` is tried first. */
  readonly origin: string;
}

/** Everything the daemon reads at start, validated. */
export interface GatewayConfig {
  readonly profile: string | undefined;
  readonly licenseUrl: string | undefined;
  /** Extra license public-key files (EDGE_LICENSE_TRUSTED_KEYS); honoured only from source. */
  readonly licenseTrustedKeys: readonly string[];
  readonly relay: RelayTarget;
  /** `--cors`: off, any origin (bare `--cors`), or the listed origins (`--cors=<o1>,<o2>`). */
  readonly cors: boolean | readonly string[];
  /** `--allowed-hosts` / EDGE_ALLOWED_HOSTS: extra `Host` names, or "*" (no Host check). */
  readonly allowedHosts: readonly string[] | "*";
  /** EDGE_API_TOKEN: one API token with every scope (docs/access.md). Never logged. */
  readonly apiToken: string | undefined;
  /** EDGE_API_TOKENS_FILE: the file of named, scoped API tokens (docs/access.md). */
  readonly apiTokensFile: string | undefined;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Directory whose files may be protected with `secure_send_file` (read and written). */
  readonly filesDir: string;
  readonly logLevel: LogLevel;
  /** SSE keepalive interval in ms (15 s by default; tests shorten it). */
  readonly ssePingMs: number;
  /** Allow IMAP/SMTP without TLS (only when explicitly configured). */
  readonly allowPlaintextMail: boolean;
  /** `--import-backup` / EDGE_IMPORT_BACKUP: a backup restored before provisioning (docs/backup.md). */
  readonly importBackup: string | undefined;
  /** EDGE_BACKUP_PASSPHRASE: opens `importBackup`. Never logged. */
  readonly backupPassphrase: string | undefined;
  /**
   * `--p2p-listen` / EDGE_P2P_LISTEN: the UDP address of the direct path over QUIC
   * (docs/p2p.md); port 0 is an ephemeral port (the default); null when `off`.
   */
  readonly p2pListen: { readonly host: string; readonly port: number } | null;
  /** `--stun` / EDGE_STUN_SERVER: a STUN server that tells the direct path its public mapping. */
  readonly stunServer: { readonly host: string; readonly port: number } | undefined;
}

/**
 * The environment variables the daemon reads, by the contract's names (docs/contract.md §1.3; see
 * `productEnvName`).
 */
export const DAEMON_ENV_VARS = [
  "EDGE_PROFILE",
  "EDGE_LICENSE_URL",
  "EDGE_LICENSE_TRUSTED_KEYS",
  "EDGE_SERVER",
  "EDGE_DATA_DIR",
  "EDGE_FILES_DIR",
  "EDGE_LOG_LEVEL",
  "EDGE_SSE_PING_MS",
  "EDGE_ALLOW_PLAINTEXT_MAIL",
  "EDGE_HOST",
  "EDGE_ALLOWED_HOSTS",
  "EDGE_API_TOKEN",
  "EDGE_API_TOKENS_FILE",
  "EDGE_IMPORT_BACKUP",
  "EDGE_BACKUP_PASSPHRASE",
  "EDGE_P2P_LISTEN",
  "EDGE_STUN_SERVER",
] as const;

/** Prefix of the contract's input names. */
const SPEC_ENV_PREFIX = "EDGE_";
/**
 * Prefix the product publishes for the same inputs (`PRIVITTY_PROFILE`,
 * docs/product-compat.md#environment).
 */
const PRODUCT_ENV_PREFIX = "PRIVITTY_";

/** The product's twin of a contract input name: `EDGE_PROFILE` → `PRIVITTY_PROFILE`. */
export function productEnvName(name: string): string {
  if (!name.startsWith(SPEC_ENV_PREFIX)) throw new Error(`${name} is not an EDGE_ input`);
  return PRODUCT_ENV_PREFIX + name.slice(SPEC_ENV_PREFIX.length);
}

/** Both names of an input for messages: `EDGE_PROFILE (or PRIVITTY_PROFILE)`. */
export function envNames(name: string): string {
  return `${name} (or ${productEnvName(name)})`;
}

/**
 * Every variable the daemon may read: each contract name and its product twin (the permission set).
 */
export const DAEMON_ENV_ALLOW: readonly string[] = DAEMON_ENV_VARS.flatMap((
  n,
) => [n, productEnvName(n)]);

type EnvReader = (name: string) => string | undefined;

/** An input read from the environment: its value and how to name it in an error. */
interface EnvInput {
  readonly value: string | undefined;
  /** The variable that was set (`PRIVITTY_X (twin of EDGE_X)` for the product name). */
  readonly label: string;
}

/**
 * Reads an input by its contract name, else by the product's twin: `EDGE_X` wins when both are set
 * (the contract's name), `PRIVITTY_X` is used when only it is set.
 */
export function readEnvInput(env: EnvReader, name: string): EnvInput {
  const spec = env(name);
  if (spec !== undefined) return { value: spec, label: name };
  const twin = productEnvName(name);
  const product = env(twin);
  if (product !== undefined) return { value: product, label: `${twin} (twin of ${name})` };
  return { value: undefined, label: name };
}

/**
 * Inputs set under both names with different values: `EDGE_X` is used; the daemon logs these
 * so the operator sees which one won.
 */
export function shadowedEnvInputs(env: EnvReader): string[] {
  return DAEMON_ENV_VARS.filter((n) => {
    const spec = env(n);
    const product = env(productEnvName(n));
    return spec !== undefined && product !== undefined && spec !== product;
  }).map((n) => `${n} is set, so ${productEnvName(n)} is ignored`);
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/**
 * Parses `EDGE_SERVER`: a host name, an `https://host[/new]` URL, or `http://<loopback>:port`.
 * `label` names the input in errors.
 */
export function parseRelayTarget(input: string, label = "EDGE_SERVER"): RelayTarget {
  const value = input.trim();
  const form =
    'a host name ("relay.example.org"), an https URL ("https://relay.example.org/new") ' +
    'or a loopback http URL ("http://127.0.0.1:8080")';
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch (cause) {
      throw new ConfigError(
        `${label} "${input}" is not a valid URL; expected ${form}`,
        undefined,
        {
          cause,
        },
      );
    }
    if (url.protocol === "http:" && !LOOPBACK.test(url.hostname)) {
      throw new ConfigError(
        `${label} "${input}" uses plain http for a non-loopback host; use https (expected ${form})`,
      );
    }
    const path = url.pathname === "/" || url.pathname === "" ? "/new" : url.pathname;
    return Object.freeze({
      input,
      host: url.hostname,
      registerUrl: `${url.origin}${path}`,
      origin: url.origin,
    });
  }
  if (!/^[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_-]{1,63})+$/.test(value)) {
    throw new ConfigError(`${label} "${input}" is not valid; expected ${form}`);
  }
  const host = value.toLowerCase();
  return Object.freeze({
    input,
    host,
    registerUrl: `https://${host}/new`,
    origin: `https://${host}`,
  });
}

function parsePort(value: string, name: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535) {
    throw new ConfigError(`${name} "${value}" is not valid; expected a TCP port 1-65535`);
  }
  return n;
}

function parseBool(value: string, name: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off|)$/i.test(value)) return false;
  throw new ConfigError(`${name} "${value}" is not valid; expected true/false (or 1/0)`);
}

function absoluteDir(value: string, name: string): string {
  if (!value.startsWith("/")) {
    throw new ConfigError(`${name} "${value}" is not valid; expected an absolute directory path`);
  }
  return value.length > 1 ? value.replace(/\/+$/, "") : value;
}

/**
 * Refuses a files directory that is the data directory, contains it, or lies in its state
 * (`accounts/`, the license, …): every file there may be sent to a peer.
 */
function checkFilesDir(filesDir: string, dataDir: string, name: string): void {
  const files = posix.normalize(filesDir);
  const data = posix.normalize(dataDir);
  const contains = files === data || files === "/" || data.startsWith(`${files}/`);
  const inState = files.startsWith(`${data}/`) &&
    DATA_DIR_STATE_ENTRIES.has(files.slice(data.length + 1).split("/")[0]);
  if (contains || inState) {
    throw new ConfigError(
      `${name} "${filesDir}" is not valid: it ${
        contains ? "is or contains" : "lies in the state of"
      } ` +
        `the data directory ${dataDir}, and files there may be sent to peers; expected a ` +
        `directory outside the data directory's state (default: ${data}/${DataDirLayout.FILES_DIR})`,
    );
  }
}

/**
 * Reads `--name value` and `--name=value` flags; `boolean` flags take no value; `optional` ones
 * take one only as `--name=value` (bare: true).
 */
export function readFlags(
  args: readonly string[],
  spec: {
    values: readonly string[];
    booleans: readonly string[];
    optional?: readonly string[];
  },
): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(arg);
    if (!m) throw new ConfigError(`unexpected argument "${arg}"; see --help`);
    const [, name, inline] = m;
    if (spec.optional?.includes(name)) {
      out.set(name, inline ?? true);
    } else if (spec.booleans.includes(name)) {
      if (inline !== undefined) out.set(name, parseBool(inline, `--${name}`) ? true : "false");
      else out.set(name, true);
    } else if (spec.values.includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new ConfigError(`--${name} needs a value`);
      out.set(name, value);
    } else {
      throw new ConfigError(`unknown option --${name}; see --help`);
    }
  }
  return out;
}

/**
 * Flags accepted by `serve`; `listen` and `accounts` are the product's names
 * (docs/product-compat.md#daemon-flags).
 */
export const SERVE_FLAGS = {
  values: [
    "port",
    "host",
    "data-dir",
    "files-dir",
    "listen",
    "accounts",
    "allowed-hosts",
    "import-backup",
    "p2p-listen",
    "stun",
  ],
  booleans: [],
  optional: ["cors"],
} as const;

/**
 * Parses `--cors`: bare (or `=true`) answers any origin, `=false` none, else a comma list of
 * origins (`https://hmi.example:8443`), each exactly as a browser sends it in `Origin`.
 */
export function parseCors(value: string | true | undefined): boolean | readonly string[] {
  if (value === undefined) return false;
  if (value === true) return true;
  if (/^(1|true|yes|on|0|false|no|off)$/i.test(value)) return parseBool(value, "--cors");
  const origins = value.split(",").map((o) => o.trim()).filter((o) => o !== "");
  if (origins.length === 0) {
    throw new ConfigError(`--cors= needs a list of origins (e.g. --cors=https://hmi.example)`);
  }
  for (const origin of origins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (url === undefined || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new ConfigError(
        `--cors origin "${origin}" is not valid; expected scheme://host[:port] with no path, ` +
          `as a browser sends it (e.g. https://hmi.example or http://192.168.1.5:8080)`,
      );
    }
  }
  return Object.freeze(origins);
}

/** Parses `--allowed-hosts` / EDGE_ALLOWED_HOSTS: host names (`*.` for a domain's), or `*`. */
export function parseAllowedHosts(
  value: string | undefined,
  label: string,
): readonly string[] | "*" {
  const names = (value ?? "").split(",").map((n) => n.trim().toLowerCase()).filter((n) => n !== "");
  if (names.includes("*")) return "*";
  for (const name of names) {
    if (!/^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_-]{1,63})*\.?$/.test(name)) {
      throw new ConfigError(
        `${label} "${name}" is not valid; expected host names separated by commas ` +
          `(gw.example.org, *.example.org), or * to turn the Host check off`,
      );
    }
  }
  return Object.freeze(names.map((n) => n.replace(/\.$/, "")));
}

/** Shortest API token accepted: a guessable one would defeat the point. */
export const MIN_API_TOKEN_LENGTH = 16;

const LISTEN_FORM = "HOST:PORT (e.g. 0.0.0.0:7200, 127.0.0.1:7200 or [::1]:7200)";

/** Parses `--listen HOST:PORT`; an IPv6 host is bracketed (`[::1]:7200`), an empty host is all. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]*)):([^:]*)$/.exec(value);
  if (m === null) {
    throw new ConfigError(`--listen "${value}" is not valid; expected ${LISTEN_FORM}`);
  }
  const host = m[1] ?? m[2];
  return {
    host: host === "" ? ALL_INTERFACES : host,
    port: parsePort(m[3], `--listen "${value}": port`),
  };
}

/** Parses `HOST:PORT` (IPv6 bracketed) for the direct path's inputs, naming `label` on error. */
function parseUdpAddress(value: string, label: string, example: string) {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):([^:]*)$/.exec(value.trim());
  if (m === null) {
    throw new ConfigError(`${label} "${value}" is not valid; expected HOST:PORT (e.g. ${example})`);
  }
  if (!/^\d{1,5}$/.test(m[3]!) || Number(m[3]) > 65535) {
    throw new ConfigError(`${label} "${value}": port is not valid; expected a UDP port 0-65535`);
  }
  const port = Number(m[3]);
  return { host: (m[1] ?? m[2])!, port };
}

/** Parses `--p2p-listen` / EDGE_P2P_LISTEN: `off`, or HOST:PORT (port 0: ephemeral). */
export function parseP2pListen(
  value: string | undefined,
  label: string,
): GatewayConfig["p2pListen"] {
  if (value === undefined || value.trim() === "") return { host: "0.0.0.0", port: 0 };
  if (value.trim().toLowerCase() === "off") return null;
  return parseUdpAddress(value, label, "0.0.0.0:7201, [::]:0 or off");
}

/** Parses `--stun` / EDGE_STUN_SERVER: HOST:PORT of a STUN server (RFC 8489), unset: none. */
export function parseStunServer(
  value: string | undefined,
  label: string,
): GatewayConfig["stunServer"] {
  if (value === undefined || value.trim() === "") return undefined;
  const a = parseUdpAddress(value, label, "stun.example.org:3478");
  if (a.port === 0) throw new ConfigError(`${label} "${value}": port 0 is not a STUN server's`);
  return a;
}

/** Throws when a flag and its product alias are both given (which one counts would be a guess). */
function refuseBoth(flags: Map<string, string | true>, alias: string, names: readonly string[]) {
  const given = names.filter((n) => flags.has(n));
  if (flags.has(alias) && given.length > 0) {
    const others = given.map((n) => `--${n}`).join(" and ");
    throw new ConfigError(
      `--${alias} and ${others} both set ${
        alias === "listen" ? "the listen address" : "the data directory"
      }; ` +
        `give only one (--${alias} is the product's name for ${
          names.map((n) => `--${n}`).join("/")
        })`,
    );
  }
}

/** Builds the validated configuration from `serve` flags and the environment. */
export function parseConfig(args: readonly string[], env: EnvReader): GatewayConfig {
  const flags = readFlags(args, SERVE_FLAGS);
  refuseBoth(flags, "listen", ["host", "port"]);
  refuseBoth(flags, "accounts", ["data-dir"]);
  const str = (flag: string) => {
    const v = flags.get(flag);
    return typeof v === "string" ? v : undefined;
  };
  const input = (name: string) => readEnvInput(env, name);
  const dataFlag = str("data-dir") !== undefined ? "data-dir" : "accounts";
  const dataEnv = input("EDGE_DATA_DIR");
  const dataDir = absoluteDir(
    str(dataFlag) ?? dataEnv.value ?? DEFAULT_DATA_DIR,
    str(dataFlag) !== undefined ? `--${dataFlag}` : dataEnv.label,
  );
  const filesEnv = input("EDGE_FILES_DIR");
  const filesDirInput = str("files-dir") ?? filesEnv.value;
  const filesDirName = str("files-dir") !== undefined ? "--files-dir" : filesEnv.label;
  const filesDir = filesDirInput === undefined
    ? `${dataDir}/${DataDirLayout.FILES_DIR}`
    : absoluteDir(filesDirInput, filesDirName);
  checkFilesDir(filesDir, dataDir, filesDirName);
  const profileEnv = input("EDGE_PROFILE");
  const profile = profileEnv.value?.trim();
  if (profile !== undefined && profile.length > 100) {
    throw new ConfigError(
      `${profileEnv.label} is too long; expected a display name of at most 100 characters`,
    );
  }
  const licenseEnv = input("EDGE_LICENSE_URL");
  const licenseUrl = licenseEnv.value?.trim() || undefined;
  if (licenseUrl !== undefined && !/^https?:\/\/\S+$/.test(licenseUrl)) {
    throw new ConfigError(
      `${licenseEnv.label} "${licenseUrl}" is not valid; expected an http(s) URL`,
    );
  }
  const licenseTrustedKeys = (input("EDGE_LICENSE_TRUSTED_KEYS").value ?? "").split(",")
    .map((p) => p.trim()).filter((p) => p !== "");
  const levelEnv = input("EDGE_LOG_LEVEL");
  const logLevel = levelEnv.value === undefined ? "info" : parseLogLevel(levelEnv.value);
  if (logLevel === undefined) {
    throw new ConfigError(
      `${levelEnv.label} "${levelEnv.value}" is not valid; expected debug|info|warn|error`,
    );
  }
  const pingEnv = input("EDGE_SSE_PING_MS");
  const ssePingMs = pingEnv.value === undefined ? SSE_PING_MS : Number(pingEnv.value);
  if (!Number.isInteger(ssePingMs) || ssePingMs < 10 || ssePingMs > 3_600_000) {
    throw new ConfigError(
      `${pingEnv.label} "${pingEnv.value}" is not valid; expected 10-3600000 ms`,
    );
  }
  const serverEnv = input("EDGE_SERVER");
  const plaintextEnv = input("EDGE_ALLOW_PLAINTEXT_MAIL");
  const listen = str("listen") === undefined ? undefined : parseListen(str("listen")!);
  const hostEnv = input("EDGE_HOST");
  const hostsEnv = input("EDGE_ALLOWED_HOSTS");
  const allowedHosts = str("allowed-hosts") !== undefined
    ? parseAllowedHosts(str("allowed-hosts"), "--allowed-hosts")
    : parseAllowedHosts(hostsEnv.value, hostsEnv.label);
  const p2pEnv = input("EDGE_P2P_LISTEN");
  const stunEnv = input("EDGE_STUN_SERVER");
  const tokenEnv = input("EDGE_API_TOKEN");
  const tokensFileEnv = input("EDGE_API_TOKENS_FILE");
  const apiToken = tokenEnv.value === "" ? undefined : tokenEnv.value;
  const apiTokensFile = tokensFileEnv.value === "" ? undefined : tokensFileEnv.value;
  if (apiToken !== undefined && apiTokensFile !== undefined) {
    throw new ConfigError(
      `${tokenEnv.label} and ${tokensFileEnv.label} are both set; give one (the file can hold ` +
        "a token with every scope: read,send,admin)",
    );
  }
  if (apiToken !== undefined && apiToken.trim().length < MIN_API_TOKEN_LENGTH) {
    throw new ConfigError(
      `${tokenEnv.label} is too short; expected at least ${MIN_API_TOKEN_LENGTH} characters ` +
        "(e.g. openssl rand -hex 32)",
    );
  }
  if (apiTokensFile !== undefined && !apiTokensFile.startsWith("/")) {
    throw new ConfigError(
      `${tokensFileEnv.label} "${apiTokensFile}" is not valid; expected an absolute file path`,
    );
  }
  const backup = parseImportBackup(str("import-backup"), input);
  return Object.freeze({
    profile: profile === "" ? undefined : profile,
    licenseUrl,
    licenseTrustedKeys: Object.freeze(licenseTrustedKeys),
    relay: parseRelayTarget(serverEnv.value ?? DEFAULT_RELAY, serverEnv.label),
    cors: parseCors(flags.get("cors")),
    allowedHosts,
    apiToken: apiToken?.trim(),
    apiTokensFile,
    port: listen?.port ??
      (str("port") === undefined ? DEFAULT_PORT : parsePort(str("port")!, "--port")),
    host: listen?.host ?? str("host") ?? (hostEnv.value || undefined) ?? DEFAULT_HOST,
    dataDir,
    filesDir,
    logLevel,
    ssePingMs,
    allowPlaintextMail: parseBool(plaintextEnv.value ?? "false", plaintextEnv.label),
    ...backup,
    p2pListen: str("p2p-listen") !== undefined
      ? parseP2pListen(str("p2p-listen"), "--p2p-listen")
      : parseP2pListen(p2pEnv.value, p2pEnv.label),
    stunServer: str("stun") !== undefined
      ? parseStunServer(str("stun"), "--stun")
      : parseStunServer(stunEnv.value, stunEnv.label),
  });
}

/**
 * `--import-backup FILE` (else EDGE_IMPORT_BACKUP): an absolute file path, which needs
 * EDGE_BACKUP_PASSPHRASE (the passphrase is read only then).
 */
function parseImportBackup(
  flag: string | undefined,
  input: (name: string) => EnvInput,
): { importBackup: string | undefined; backupPassphrase: string | undefined } {
  const env = input("EDGE_IMPORT_BACKUP");
  const value = flag ?? (env.value || undefined);
  const label = flag !== undefined ? "--import-backup" : env.label;
  if (value === undefined) return { importBackup: undefined, backupPassphrase: undefined };
  if (!value.startsWith("/")) {
    throw new ConfigError(`${label} "${value}" is not valid; expected an absolute file path`);
  }
  const pass = input("EDGE_BACKUP_PASSPHRASE");
  if (!pass.value) {
    throw new ConfigError(
      `${label} needs the backup's passphrase in ${envNames("EDGE_BACKUP_PASSPHRASE")}`,
    );
  }
  return { importBackup: value, backupPassphrase: pass.value };
}
