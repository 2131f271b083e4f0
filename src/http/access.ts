/**
 * Who may call the API (docs/access.md): the `Host` check against DNS rebinding, the `Origin`
 * check against cross-site requests (forms, `fetch` with `mode: "no-cors"`), and the optional API
 * tokens with their scopes. Both the Hono routes and the `Deno.serve` fast paths
 * (`fast_fetch.ts`) call `refuseRequest`, so no path skips a check; `/health` is never checked.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { ConfigError } from "../errors.ts";
import { ALL_SCOPES, type Scope } from "../rpc/method_entry.ts";
import { bearerToken, TOKEN_CHALLENGE } from "./bearer.ts";

/** `--allowed-hosts`: extra host names, or `"*"` (no Host check). */
export type AllowedHosts = readonly string[] | "*";

/** `--cors`: off, any origin (a bare `--cors`), or the listed origins. */
export type CorsSetting = boolean | readonly string[];

/** What `refuseRequest` checks. */
export interface AccessPolicy {
  readonly allowedHosts: AllowedHosts;
  readonly cors: CorsSetting;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,62})$/;

/** The host name of a `Host` header value (`name:port`, `[v6]:port`), lowercased, or undefined. */
export function hostName(host: string): string | undefined {
  const value = host.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    return value.slice(0, end + 1);
  }
  const m = /^([^:]*)(?::\d{1,5})?$/.exec(value);
  if (m === null) return undefined;
  const name = m[1].endsWith(".") ? m[1].slice(0, -1) : m[1];
  return name === "" ? undefined : name;
}

/**
 * True when `name` (from `hostName`) may reach the API: an IP literal, `localhost` or
 * `*.localhost`, a single label (a container service name), or one `allowed` lists (exactly, or
 * under a `*.` entry: `*.example.org` admits `gw.example.org`).
 */
export function hostAllowed(name: string, allowed: AllowedHosts): boolean {
  if (allowed === "*") return true;
  if (name.startsWith("[") && /^\[[0-9a-f:.]+\]$/.test(name)) return true;
  if (IPV4.test(name)) return true;
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (LABEL.test(name)) return true;
  return allowed.some((entry) =>
    entry.startsWith("*.") ? name.endsWith(entry.slice(1)) && name.length > entry.length - 1 : (
      entry === name
    )
  );
}

/** The request's `Host`: the header, else the URL's (in-process requests carry none). */
function requestHost(req: Request): string {
  const header = req.headers.get("host");
  if (header !== null) return header;
  const scheme = req.url.indexOf("//");
  const end = req.url.indexOf("/", scheme + 2);
  return req.url.slice(scheme + 2, end < 0 ? undefined : end);
}

/** A 403 answer (no cache) whose body says what to change. */
function forbidden(error: string): Response {
  return Response.json({ error }, { status: 403 });
}

/** True when `origin` names the host the request was sent to (same origin, any scheme). */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const o = new URL(origin);
    return (o.protocol === "http:" || o.protocol === "https:") &&
      o.host === new URL(`${o.protocol}//${host}`).host;
  } catch {
    return false;
  }
}

/**
 * The 403 answer for a request the policy refuses, else undefined. The `Host` must name this
 * gateway (see `hostAllowed`): a web page that rebinds its own name to 127.0.0.1 sends its own
 * name. A request with an `Origin` must come from this gateway's own origin, from any origin
 * under a bare `--cors`, or from one `--cors=<origins>` lists: without it a page on another
 * origin could still send a form post or a `no-cors` fetch (it cannot read the answer, but
 * the call would run). Requests without `Origin` (curl, the CLI) pass.
 */
export function refuseRequest(req: Request, policy: AccessPolicy): Response | undefined {
  const host = requestHost(req);
  const name = hostName(host);
  if (name === undefined || !hostAllowed(name, policy.allowedHosts)) {
    return forbidden(
      `Host "${host}" is not allowed (DNS rebinding protection): this gateway answers IP ` +
        "addresses, localhost and single-label names; add this name to --allowed-hosts " +
        "(or EDGE_ALLOWED_HOSTS), or --allowed-hosts=* to turn the check off",
    );
  }
  const origin = req.headers.get("origin");
  if (origin === null || policy.cors === true) return undefined;
  if (Array.isArray(policy.cors) && policy.cors.includes(origin)) return undefined;
  if (sameOrigin(origin, host)) return undefined;
  return forbidden(
    `cross-origin request refused: Origin "${origin}" is not this gateway's origin; ` +
      `allow it with --cors=${origin} (a bare --cors allows every origin)`,
  );
}

/** One entry of the API tokens: a name for logs, its scopes and the SHA-256 of the token. */
export interface ApiTokenEntry {
  readonly name: string;
  readonly scopes: ReadonlySet<Scope>;
  readonly digest: Uint8Array;
}

function sha256(text: string): Uint8Array {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Who called: the token's name and scopes. */
export interface Caller {
  readonly name: string;
  readonly scopes: ReadonlySet<Scope>;
}

/**
 * The API tokens (`EDGE_API_TOKEN`, `EDGE_API_TOKENS_FILE`). A presented token is hashed and
 * compared with every entry's digest in constant time (`timingSafeEqual` on equal-length
 * digests, all entries every time), so neither the token nor which entry matched leaks through
 * timing. Tokens are never kept in clear nor logged.
 */
export class ApiTokens {
  readonly #entries: readonly ApiTokenEntry[];

  constructor(entries: readonly ApiTokenEntry[]) {
    this.#entries = entries;
  }

  /** One token with every scope (`EDGE_API_TOKEN`). */
  static single(token: string): ApiTokens {
    return new ApiTokens([{
      name: "EDGE_API_TOKEN",
      scopes: new Set(ALL_SCOPES),
      digest: sha256(token),
    }]);
  }

  /**
   * Parses a tokens file: one `<name> <scope>[,<scope>…] sha256:<64 hex>` per line; blank lines
   * and lines starting with `#` are skipped. `label` names the file in errors.
   */
  static parse(text: string, label: string): ApiTokens {
    const entries: ApiTokenEntry[] = [];
    const lines = text.split(/\r?\n/);
    for (const [i, raw] of lines.entries()) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const where = `${label} line ${i + 1}`;
      const m = /^(\S+)\s+(\S+)\s+sha256:([0-9a-fA-F]{64})$/.exec(line);
      if (m === null) {
        throw new ConfigError(
          `${where} is not valid; expected "<name> <scope>[,<scope>…] sha256:<64 hex digits>"`,
        );
      }
      const scopes = new Set<Scope>();
      for (const s of m[2].split(",")) {
        if (!(ALL_SCOPES as readonly string[]).includes(s)) {
          throw new ConfigError(
            `${where}: unknown scope "${s}"; expected ${ALL_SCOPES.join(", ")}`,
          );
        }
        scopes.add(s as Scope);
      }
      if (entries.some((e) => e.name === m[1])) {
        throw new ConfigError(`${where}: the name "${m[1]}" is used twice`);
      }
      const digest = Uint8Array.from(m[3].match(/../g)!.map((h) => parseInt(h, 16)));
      entries.push({ name: m[1], scopes, digest });
    }
    if (entries.length === 0) {
      throw new ConfigError(`${label} holds no token; every API call would be refused`);
    }
    return new ApiTokens(entries);
  }

  /** How many tokens there are (for the start-up log line). */
  get size(): number {
    return this.#entries.length;
  }

  /** The caller a presented token identifies, or undefined. */
  check(token: string | undefined): Caller | undefined {
    if (token === undefined || token === "") return undefined;
    const digest = sha256(token);
    let found: ApiTokenEntry | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(digest, entry.digest) && found === undefined) found = entry;
    }
    return found;
  }
}

/** The `?access_token=` of a URL (EventSource cannot send headers), if any. */
function queryToken(url: string): string | undefined {
  const q = url.indexOf("?");
  if (q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get("access_token") ?? undefined;
}

/** The outcome of a token check: the caller, or the 401 answer to send. */
export type Authorization =
  | { readonly caller: Caller; readonly refused?: undefined }
  | { readonly caller?: undefined; readonly refused: Response };

/**
 * Checks a request's `Authorization: Bearer` (or, when `queryAllowed`, its `?access_token=`).
 * `body(message)` builds the 401 body (a JSON-RPC error for `/rpc`).
 */
export function authorize(
  req: Request,
  tokens: ApiTokens,
  queryAllowed: boolean,
  body: (message: string) => unknown,
): Authorization {
  const header = req.headers.get("authorization");
  const presented = bearerToken(header) ?? (queryAllowed ? queryToken(req.url) : undefined);
  const caller = tokens.check(presented);
  if (caller !== undefined) return { caller };
  const message = presented === undefined
    ? "this gateway needs an API token: send Authorization: Bearer <token>" +
      (queryAllowed ? " (or ?access_token=<token>)" : "")
    : "the API token is not valid";
  const challenge = presented === undefined
    ? TOKEN_CHALLENGE
    : `${TOKEN_CHALLENGE}, error="invalid_token"`;
  return {
    refused: Response.json(body(message), {
      status: 401,
      headers: { "WWW-Authenticate": challenge },
    }),
  };
}

/** Where the API tokens come from (`GatewayConfig`'s fields). */
export interface TokenSources {
  readonly apiToken: string | undefined;
  readonly apiTokensFile: string | undefined;
}

/**
 * The API tokens the configuration names, or undefined when they are off (the default). A tokens
 * file that cannot be read or parsed stops the start with a message naming it.
 */
export async function loadApiTokens(sources: TokenSources): Promise<ApiTokens | undefined> {
  if (sources.apiToken !== undefined) return ApiTokens.single(sources.apiToken);
  const path = sources.apiTokensFile;
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    const why = err instanceof Deno.errors.NotCapable
      ? "the daemon may not read it (when run as shipped, put it in the data directory)"
      : err instanceof Error
      ? err.message
      : String(err);
    throw new ConfigError(`cannot read EDGE_API_TOKENS_FILE ${path}: ${why}`, undefined, {
      cause: err,
    });
  }
  return ApiTokens.parse(text, `EDGE_API_TOKENS_FILE ${path}`);
}
