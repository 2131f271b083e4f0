/**
 * The single viewer session (docs/contract.md §5.2): `/auth` trades the device fingerprint for a
 * bearer token,
 * `/stream` checks it. Secrets are compared in constant time and only token digests are kept.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { GatewayError } from "../errors.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";

const log = logger("viewer");

/**
 * Default token lifetime: one hour, the product's documented `expires_in` 3600
 * (docs/product-compat.md#viewer-auth).
 */
export const DEFAULT_VIEWER_TOKEN_LIFETIME_MS = 60 * 60_000;

/** The presented fingerprint did not match this device. */
export class ViewerAuthError extends GatewayError {}

/** A freshly issued token; `expiresAt` in Unix ms. The token is shown once, never logged. */
export interface IssuedToken {
  readonly token: string;
  readonly expiresAt: number;
}

/** Result of checking a bearer token. */
export type TokenCheck = "ok" | "missing" | "expired" | "invalid";

/** Construction options of `ViewerSessions`. */
export interface ViewerSessionsOptions {
  /** This device's fingerprint (hex SHA-256, see device_fingerprint.ts). */
  readonly fingerprint: string;
  /** Receives ViewerSessionStarted / ViewerSessionEnded. */
  readonly events: EventSink;
  readonly lifetimeMs?: number;
  /** Clock in Unix ms (default `Date.now`). */
  readonly now?: () => number;
}

interface Session {
  readonly digest: Uint8Array;
  readonly expiresAt: number;
  endReported: boolean;
}

/** SHA-256 of a string: fixed-length input for timingSafeEqual, and how tokens are stored. */
function digest(value: string): Uint8Array {
  return createHash("sha256").update(value, "utf8").digest();
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Holds at most one viewer session; a new authentication replaces the previous one. */
export class ViewerSessions {
  readonly #expected: Uint8Array;
  readonly #events: EventSink;
  readonly #now: () => number;
  /** Token lifetime in ms. */
  readonly lifetimeMs: number;
  #session: Session | undefined;

  constructor(options: ViewerSessionsOptions) {
    this.#expected = digest(normalizeFingerprint(options.fingerprint));
    this.#events = options.events;
    this.#now = options.now ?? Date.now;
    this.lifetimeMs = options.lifetimeMs ?? DEFAULT_VIEWER_TOKEN_LIFETIME_MS;
  }

  /**
   * Checks `fingerprint` against this device's and issues a new token (32 random bytes,
   * base64url) valid for `lifetimeMs`. Ends any previous session (its token stops working).
   * Throws ViewerAuthError on a mismatch; the current session is then left as it was.
   */
  authenticate(fingerprint: string): IssuedToken {
    if (!timingSafeEqual(digest(normalizeFingerprint(fingerprint)), this.#expected)) {
      // per-client limits and the log summary: http/auth_rate_limit.ts
      log.debug("viewer authentication failed: fingerprint does not match this device");
      throw new ViewerAuthError("viewer authentication failed");
    }
    const now = this.#now();
    const previous = this.#session;
    if (previous !== undefined) {
      this.#end(previous, previous.expiresAt <= now ? "expired" : "replaced");
    }
    const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const expiresAt = now + this.lifetimeMs;
    this.#session = { digest: digest(token), expiresAt, endReported: false };
    this.#events.publish({ kind: "ViewerSessionStarted", expiresAt: Math.floor(expiresAt / 1000) });
    log.info("viewer session started", { expiresAt: new Date(expiresAt).toISOString() });
    return { token, expiresAt };
  }

  /** Checks a bearer token: `ok`, or why not (`missing`, `expired`, `invalid`). */
  check(token: string | undefined): TokenCheck {
    if (token === undefined || token === "") return "missing";
    const session = this.#session;
    if (session === undefined || !timingSafeEqual(digest(token), session.digest)) return "invalid";
    if (session.expiresAt <= this.#now()) {
      this.#end(session, "expired");
      return "expired";
    }
    return "ok";
  }

  /** True while a session exists and has not expired. */
  get active(): boolean {
    return this.#session !== undefined && this.#session.expiresAt > this.#now();
  }

  #end(session: Session, reason: "expired" | "replaced"): void {
    if (session.endReported) return;
    session.endReported = true;
    this.#events.publish({ kind: "ViewerSessionEnded", reason });
    log.info(`viewer session ended (${reason})`);
  }
}

/** Fingerprints are hex; compare them case- and whitespace-insensitively. */
export function normalizeFingerprint(value: string): string {
  return value.trim().toLowerCase();
}
