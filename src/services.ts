/**
 * The bag of long-lived services the daemon composes once and hands to HTTP routes and RPC
 * methods. Only interfaces live here, so every layer depends on this file and not on each other.
 */
import type { GatewayConfig } from "./config.ts";
import type { EventSink } from "./events/types.ts";
import type { Store } from "./store/mod.ts";

/** Reports the live mail connection state (`get_connectivity`, `/health`). */
export interface ConnectivitySource {
  /** Current level, see `Connectivity` in constants.ts. */
  level(): number;
}

/** License state consulted by the dispatch gate (`license: true` methods). */
export interface LicenseSource {
  /** `"no_license"` or another status value; gated methods run only when `isActive()`. */
  status(): string;
  isActive(): boolean;
  /** Optional: the status plus the license's public fields (id, type, expiry), for `license_status`. */
  describe?(): Record<string, string | number | null>;
}

/** What RPC handlers and routes may use. */
export interface Services {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly events: EventSink;
  readonly connectivity: ConnectivitySource;
  readonly license: LicenseSource;
  /** `Date.now()` when the daemon started serving. */
  readonly startedAt: number;
}
