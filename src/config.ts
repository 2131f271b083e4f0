/**
 * Turns the daemon's environment variables and flags into one frozen `GatewayConfig`.
 * Pure: takes the argument list and an env reader, validates every input and names it on error.
 */
import {
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
  readonly cors: boolean;
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
}

/** The environment variables the daemon reads (the permission set allows exactly these). */
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
] as const;

type EnvReader = (name: string) => string | undefined;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/** Parses `EDGE_SERVER`: a host name, an `https://host[/new]` URL, or `http://<loopback>:port`. */
export function parseRelayTarget(input: string): RelayTarget {
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
        `EDGE_SERVER "${input}" is not a valid URL; expected ${form}`,
        undefined,
        {
          cause,
        },
      );
    }
    if (url.protocol === "http:" && !LOOPBACK.test(url.hostname)) {
      throw new ConfigError(
        `EDGE_SERVER "${input}" uses plain http for a non-loopback host; use https (expected ${form})`,
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
    throw new ConfigError(`EDGE_SERVER "${input}" is not valid; expected ${form}`);
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

/** Reads `--name value` and `--name=value` flags; `boolean` flags take no value. */
export function readFlags(
  args: readonly string[],
  spec: { values: readonly string[]; booleans: readonly string[] },
): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(arg);
    if (!m) throw new ConfigError(`unexpected argument "${arg}"; see --help`);
    const [, name, inline] = m;
    if (spec.booleans.includes(name)) {
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

/** Flags accepted by `serve`. */
export const SERVE_FLAGS = {
  values: ["port", "host", "data-dir", "files-dir"],
  booleans: ["cors"],
} as const;

/** Builds the validated configuration from `serve` flags and the environment. */
export function parseConfig(args: readonly string[], env: EnvReader): GatewayConfig {
  const flags = readFlags(args, SERVE_FLAGS);
  const str = (flag: string) => {
    const v = flags.get(flag);
    return typeof v === "string" ? v : undefined;
  };
  const dataDir = absoluteDir(
    str("data-dir") ?? env("EDGE_DATA_DIR") ?? DEFAULT_DATA_DIR,
    str("data-dir") !== undefined ? "--data-dir" : "EDGE_DATA_DIR",
  );
  const filesDirInput = str("files-dir") ?? env("EDGE_FILES_DIR");
  const filesDir = filesDirInput === undefined
    ? `${dataDir}/${DataDirLayout.FILES_DIR}`
    : absoluteDir(filesDirInput, str("files-dir") !== undefined ? "--files-dir" : "EDGE_FILES_DIR");
  const profile = env("EDGE_PROFILE")?.trim();
  if (profile !== undefined && profile.length > 100) {
    throw new ConfigError(
      "EDGE_PROFILE is too long; expected a display name of at most 100 characters",
    );
  }
  const licenseUrl = env("EDGE_LICENSE_URL")?.trim() || undefined;
  if (licenseUrl !== undefined && !/^https?:\/\/\S+$/.test(licenseUrl)) {
    throw new ConfigError(`EDGE_LICENSE_URL "${licenseUrl}" is not valid; expected an http(s) URL`);
  }
  const licenseTrustedKeys = (env("EDGE_LICENSE_TRUSTED_KEYS") ?? "").split(",")
    .map((p) => p.trim()).filter((p) => p !== "");
  const levelInput = env("EDGE_LOG_LEVEL");
  const logLevel = levelInput === undefined ? "info" : parseLogLevel(levelInput);
  if (logLevel === undefined) {
    throw new ConfigError(
      `EDGE_LOG_LEVEL "${levelInput}" is not valid; expected debug|info|warn|error`,
    );
  }
  const pingInput = env("EDGE_SSE_PING_MS");
  const ssePingMs = pingInput === undefined ? SSE_PING_MS : Number(pingInput);
  if (!Number.isInteger(ssePingMs) || ssePingMs < 10 || ssePingMs > 3_600_000) {
    throw new ConfigError(`EDGE_SSE_PING_MS "${pingInput}" is not valid; expected 10-3600000 ms`);
  }
  return Object.freeze({
    profile: profile === "" ? undefined : profile,
    licenseUrl,
    licenseTrustedKeys: Object.freeze(licenseTrustedKeys),
    relay: parseRelayTarget(env("EDGE_SERVER") ?? DEFAULT_RELAY),
    cors: flags.get("cors") === true,
    port: str("port") === undefined ? DEFAULT_PORT : parsePort(str("port")!, "--port"),
    host: str("host") ?? DEFAULT_HOST,
    dataDir,
    filesDir,
    logLevel,
    ssePingMs,
    allowPlaintextMail: parseBool(
      env("EDGE_ALLOW_PLAINTEXT_MAIL") ?? "false",
      "EDGE_ALLOW_PLAINTEXT_MAIL",
    ),
  });
}
