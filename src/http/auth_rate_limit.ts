/**
 * Limits failed `POST /auth` attempts per client address (429 with `Retry-After` once a client
 * has failed too often in a window) and logs failures as a periodic summary instead of one line
 * per attempt. A Hono middleware in front of the `/auth` handler; the clock is injected.
 */
import type { MiddlewareHandler } from "hono";
import { logger } from "../log.ts";

const log = logger("viewer");

/** Settings of {@link AuthRateLimit}. */
export interface AuthRateLimitOptions {
  /** Failed attempts a client may make per window (default 5). */
  readonly maxFailures?: number;
  /** The window, in ms (default 60 s); a blocked client may try again when it ends. */
  readonly windowMs?: number;
  /** Clients remembered at most (default 10,000); the oldest are forgotten first. */
  readonly maxClients?: number;
  /** Failures are summarised in one log line per this many ms (default 60 s). */
  readonly summaryEveryMs?: number;
  readonly now?: () => number;
}

interface ClientWindow {
  start: number;
  failures: number;
}

/** Per-client failure counts and the log summary. */
export class AuthRateLimit {
  readonly maxFailures: number;
  readonly windowMs: number;
  readonly #maxClients: number;
  readonly #summaryEveryMs: number;
  readonly #now: () => number;
  readonly #clients = new Map<string, ClientWindow>();
  #summary: { start: number; failures: number; refused: number; clients: Set<string> } | undefined;

  constructor(options: AuthRateLimitOptions = {}) {
    this.maxFailures = options.maxFailures ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#summaryEveryMs = options.summaryEveryMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds `client` must wait before trying again, or undefined when it may try now. */
  retryAfter(client: string): number | undefined {
    const now = this.#now();
    this.#flushSummary(now);
    const w = this.#clients.get(client);
    if (w === undefined || now - w.start >= this.windowMs) return undefined;
    if (w.failures < this.maxFailures) return undefined;
    this.#count(now, client, "refused");
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }

  /** Records a failed attempt by `client`. */
  failed(client: string): void {
    const now = this.#now();
    this.#flushSummary(now);
    let w = this.#clients.get(client);
    if (w === undefined || now - w.start >= this.windowMs) {
      this.#clients.delete(client); // re-inserted last: the map stays ordered by window start
      w = { start: now, failures: 0 };
      this.#clients.set(client, w);
      if (this.#clients.size > this.#maxClients) {
        this.#clients.delete(this.#clients.keys().next().value!);
      }
    }
    w.failures++;
    this.#count(now, client, "failures");
  }

  /** A successful attempt clears `client`'s failures. */
  succeeded(client: string): void {
    this.#clients.delete(client);
  }

  #count(now: number, client: string, what: "failures" | "refused"): void {
    if (this.#summary === undefined) {
      this.#summary = { start: now, failures: 0, refused: 0, clients: new Set() };
      log.warn("viewer authentication failed", {
        client,
        note: `failures are summarised every ${Math.round(this.#summaryEveryMs / 1000)} s`,
      });
    }
    this.#summary[what]++;
    if (this.#summary.clients.size < 1000) this.#summary.clients.add(client);
  }

  /** Logs the summary of the period that ended before `now`, if any. */
  #flushSummary(now: number): void {
    const s = this.#summary;
    if (s === undefined || now - s.start < this.#summaryEveryMs) return;
    this.#summary = undefined;
    if (s.failures + s.refused <= 1) return; // the first line said it all
    log.warn("viewer authentication failures", {
      seconds: Math.round((now - s.start) / 1000),
      failed: s.failures,
      refused_429: s.refused,
      clients: s.clients.size,
    });
  }
}

/** The client's address as `Deno.serve` reports it (`c.env` is its handler info). */
function clientAddress(env: unknown): string {
  const addr = (env as { remoteAddr?: { hostname?: unknown } } | undefined)?.remoteAddr;
  return typeof addr?.hostname === "string" ? addr.hostname : "unknown";
}

/**
 * Middleware for `POST /auth`: 429 with `Retry-After` for a client over the limit; otherwise
 * runs the handler and counts its 403 as a failure, its 200 as a success.
 */
export function authRateLimit(limit: AuthRateLimit): MiddlewareHandler {
  return async (c, next) => {
    const client = clientAddress(c.env);
    const wait = limit.retryAfter(client);
    if (wait !== undefined) {
      return c.json(
        { error: `too many failed viewer authentication attempts; retry in ${wait} s` },
        429,
        { "Retry-After": String(wait) },
      );
    }
    await next();
    if (c.res.status === 403) limit.failed(client);
    else if (c.res.status === 200) limit.succeeded(client);
    return undefined;
  };
}
