/**
 * The bag of long-lived services the daemon composes once and hands to HTTP routes and RPC
 * methods. Each interface lives beside what implements it; this file only gathers them.
 */
import type { AccountCore } from "./account/core.ts";
import type { GatewayConfig } from "./config.ts";
import type { ConnectivitySource } from "./core/connectivity.ts";
import type { QuarantineRetry } from "./core/receive/mod.ts";
import type { EventSink } from "./events/types.ts";
import type { LicenseSource } from "./license/manager.ts";
import type { Store } from "./store/mod.ts";

/** What RPC handlers and routes may use. Tests build the real core over an in-memory store. */
export interface Services {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly events: EventSink;
  readonly connectivity: ConnectivitySource;
  readonly license: LicenseSource;
  /** `Date.now()` when the daemon started serving. */
  readonly startedAt: number;
  /** The account's core, built once at start: every domain method calls one of its members. */
  readonly core: AccountCore;
  /** Runs a quarantined mail through reception again (`retry_quarantined_mail`). */
  readonly quarantine: { retryQuarantined(id: number): Promise<QuarantineRetry> };
}
