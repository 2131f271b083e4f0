/**
 * The bag of long-lived services the daemon composes once and hands to HTTP routes and RPC
 * methods. Each interface lives beside what implements it; this file only gathers them.
 */
import type { GatewayConfig } from "./config.ts";
import type { ConnectivitySource } from "./core/connectivity.ts";
import type { WakeSender } from "./core/context.ts";
import type { QuarantineRetry } from "./core/inbox_reception.ts";
import type { OutgoingRenderer } from "./core/outgoing.ts";
import type { EventSink } from "./events/types.ts";
import type { ProtectedFiles } from "./protected_files/service.ts";
import type { LicenseSource } from "./license/manager.ts";
import type { SecureJoinService } from "./securejoin/mod.ts";
import type { Store } from "./store/mod.ts";

/** What RPC handlers and routes may use. Tests pass explicit fakes for every member. */
export interface Services {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly events: EventSink;
  readonly connectivity: ConnectivitySource;
  readonly license: LicenseSource;
  /** `Date.now()` when the daemon started serving. */
  readonly startedAt: number;
  /** Renders and encrypts what the account sends. */
  readonly outgoing: OutgoingRenderer;
  /** Invites and joins (`get_chat_securejoin_qr_code`, `secure_join`). */
  readonly secureJoin: SecureJoinService;
  /** Runs a quarantined mail through reception again (`retry_quarantined_mail`). */
  readonly quarantine: { retryQuarantined(id: number): Promise<QuarantineRetry> };
  /** Wakes the SMTP loop; `contextOf` hands it to `DomainTx`, which calls it after commits. */
  readonly wakeSender: WakeSender;
  /** Absent in builds and fakes without protected files: their methods then answer -1. */
  readonly protectedFiles?: ProtectedFiles;
}
