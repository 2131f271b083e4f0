/**
 * The CLI's HTTP client: JSON-RPC 2.0 calls to `POST /rpc` and plain GETs, with a timeout, and
 * the three ways a call can fail (RPC error, unreachable gateway, unexpected HTTP answer).
 */
import { RpcCode } from "../constants.ts";

/** A JSON-RPC error object answered by the gateway. Exit code 1, or 4 for -32001. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly method: string;
  constructor(method: string, code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.method = method;
    this.code = code;
    this.data = data;
  }

  /** True for the license-required error (-32001, docs/contract.md §7). */
  get licenseRequired(): boolean {
    return this.code === RpcCode.LICENSE_REQUIRED;
  }

  /** The JSON-RPC error object as the gateway sent it. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** The gateway did not answer: connection refused, DNS failure or timeout. Exit code 3. */
export class UnreachableError extends Error {
  readonly url: string;
  constructor(url: string, reason: string, options?: ErrorOptions) {
    super(`cannot reach the gateway at ${url}: ${reason}`, options);
    this.name = "UnreachableError";
    this.url = url;
  }
}

/** The gateway answered, but not as the protocol says (HTTP status, body). Exit code 1. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtocolError";
  }
}

/** Settings shared by every request of one CLI invocation. */
export interface HttpSettings {
  /** Gateway base URL without a trailing slash. */
  readonly baseUrl: string;
  /** Per-request timeout in ms; 0 or undefined means none. */
  readonly timeoutMs: number | undefined;
  /** Aborts requests when the CLI is interrupted. */
  readonly signal?: AbortSignal;
  /** The API token (`--token`, EDGE_TOKEN), sent as `Authorization: Bearer` to /rpc and /events. */
  readonly token?: string;
}

/** The paths API tokens guard (the viewer's /stream carries its own session token). */
const TOKEN_PATHS = /^\/(rpc|events)(\?|$)/;

/** `init` with the API token's `Authorization` header when `path` needs it and one is set. */
function withToken(settings: HttpSettings, path: string, init: RequestInit): RequestInit {
  if (settings.token === undefined || !TOKEN_PATHS.test(path)) return init;
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${settings.token}`);
  return { ...init, headers };
}

/** The hint of an HTTP 401 from /rpc or /events: which token to give. */
export function unauthorizedHint(settings: HttpSettings): string {
  return settings.token === undefined
    ? "the gateway requires an API token: set EDGE_TOKEN or pass --token"
    : "the gateway refused the API token (EDGE_TOKEN or --token)";
}

/**
 * Fetches `path` on the gateway within the timeout, mapping network failures and timeouts to
 * `UnreachableError`. The timeout covers headers only when `bodyTimeout` is false (streams);
 * `settings.signal` always ends the request, body included.
 */
export async function gatewayFetch(
  settings: HttpSettings,
  path: string,
  init: RequestInit = {},
  bodyTimeout = true,
): Promise<{ response: Response; text: () => Promise<string> }> {
  const url = settings.baseUrl + path;
  const controller = new AbortController();
  const timeoutMs = settings.timeoutMs ?? 0;
  let timedOut = false;
  const timer = timeoutMs > 0
    ? setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs)
    : undefined;
  const onAbort = () => controller.abort(settings.signal?.reason);
  settings.signal?.addEventListener("abort", onAbort, { once: true });
  const done = () => {
    clearTimeout(timer);
    settings.signal?.removeEventListener("abort", onAbort);
  };
  const fail = (err: unknown): never => {
    done();
    if (settings.signal?.aborted && !timedOut) throw err;
    if (timedOut) throw new UnreachableError(url, `no answer within ${timeoutMs} ms`);
    throw new UnreachableError(url, networkReason(err), { cause: err });
  };
  let response: Response;
  try {
    response = await fetch(url, { ...withToken(settings, path, init), signal: controller.signal });
  } catch (err) {
    return fail(err);
  }
  if (!bodyTimeout) clearTimeout(timer); // a stream: the signal still ends it, the timer not
  const text = async () => {
    try {
      const body = await response.text();
      done();
      return body;
    } catch (err) {
      return fail(err);
    }
  };
  return { response, text };
}

/** Shortens Deno's fetch errors ("fetch failed", caused by "…: Connection refused (os error 111)"). */
function networkReason(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 4; depth++) {
    messages.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  const all = messages.join(": ");
  if (/connection refused/i.test(all)) return "connection refused";
  if (/connection reset/i.test(all)) return "connection reset";
  if (/dns error|failed to lookup|name or service not known/i.test(all)) {
    return "host name not resolved";
  }
  return messages[messages.length - 1];
}

/** A JSON-RPC 2.0 client for the gateway's `POST /rpc` (positional params). */
export class RpcClient {
  readonly #settings: HttpSettings;
  #nextId = 1;

  constructor(settings: HttpSettings) {
    this.#settings = settings;
  }

  /**
   * Calls `method` with positional `params`. Resolves to the `result`, or to `undefined` when
   * the gateway answers HTTP 204 (a method without a value). Throws RpcError for a JSON-RPC
   * error, UnreachableError when the gateway does not answer, ProtocolError otherwise.
   */
  async call(method: string, params: readonly unknown[]): Promise<unknown> {
    const id = this.#nextId++;
    const body = JSON.stringify({ jsonrpc: "2.0", method, params, id });
    const { response, text } = await gatewayFetch(this.#settings, "/rpc", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
    });
    const raw = await text();
    if (response.status === 204) return undefined;
    if (response.status === 401) {
      throw new ProtocolError(`${method}: ${unauthorizedHint(this.#settings)}${snippet(raw)}`);
    }
    if (response.status !== 200) {
      throw new ProtocolError(
        `${method}: the gateway answered HTTP ${response.status} on /rpc${snippet(raw)}`,
      );
    }
    let envelope: unknown;
    try {
      envelope = JSON.parse(raw);
    } catch {
      throw new ProtocolError(`${method}: the gateway answered invalid JSON${snippet(raw)}`);
    }
    return unwrap(method, envelope);
  }
}

function unwrap(method: string, envelope: unknown): unknown {
  if (typeof envelope !== "object" || envelope === null || Array.isArray(envelope)) {
    throw new ProtocolError(`${method}: the gateway answered a non-object JSON-RPC response`);
  }
  const env = envelope as Record<string, unknown>;
  if ("error" in env && env.error !== undefined && env.error !== null) {
    const error = env.error as Record<string, unknown>;
    const code = typeof error.code === "number" ? error.code : RpcCode.INTERNAL_ERROR;
    const message = typeof error.message === "string" ? error.message : JSON.stringify(error);
    throw new RpcError(method, code, message, error.data);
  }
  if (!("result" in env)) {
    throw new ProtocolError(`${method}: the gateway's response has neither result nor error`);
  }
  return env.result;
}

function snippet(raw: string): string {
  const text = raw.trim().replace(/\s+/g, " ");
  if (text === "") return "";
  return `: ${text.length > 200 ? text.slice(0, 200) + "…" : text}`;
}
