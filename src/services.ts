/**
 * The bag of long-lived services the daemon composes once and hands to HTTP routes and RPC
 * methods. Only interfaces live here, so every layer depends on this file and not on each other.
 */
import type { GatewayConfig } from "./config.ts";
import type { ChatControl } from "./core/chat_control.ts";
import type { OutgoingDraft, RenderedMail } from "./core/messages.ts";
import type { EventSink } from "./events/types.ts";
import type { ProtectedFiles } from "./protected_files/service.ts";
import type { SecureJoinService } from "./securejoin/mod.ts";
import type { ChatRecord, ContactRecord, MessageRecord, Store } from "./store/mod.ts";

/** Reports the live mail connection state (`get_connectivity`, `/health`). */
export interface ConnectivitySource {
  /** Current level, see `Connectivity` in constants.ts. */
  level(): number;
}

/**
 * License state consulted by the dispatch gate (`license: true` methods), and its management
 * (`license_activate|sync|deactivate`; absent in sources that only report a status).
 */
export interface LicenseSource {
  /** `"no_license"` or another status value; gated methods run only when `isActive()`. */
  status(): string;
  isActive(): boolean;
  /** Optional: why the status is what it is, in words a person can act on. */
  reason?(): string;
  /** Optional: the status plus the license's public fields (id, type, expiry), for `license_status`. */
  describe?(): Record<string, string | number | boolean | null>;
  /** Activates the license behind a delivery URL; resolves with `describe()`. */
  activate?(url: string): Promise<Record<string, string | number | boolean | null>>;
  /** Re-fetches the installed license from its delivery URL; resolves with `describe()`. */
  sync?(): Promise<Record<string, string | number | boolean | null>>;
  /** Frees this device's seat; the license file stays but is no longer honoured. */
  deactivate?(): Promise<void>;
}

/**
 * The sending side, present while the mail transport runs: renders and encrypts `send_msg`
 * messages, and sends the read receipts `markseen_msgs` calls for.
 */
export interface OutgoingRenderer {
  /** Renders a draft for the chat's recipients (every one has a key); see `RenderFn`. */
  render(
    message: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
  ): Promise<RenderedMail>;
  /** Called after a message and its outbox row committed: wake the SMTP loop. */
  queued?(msgId: number): void;
  /**
   * Owes read receipts for messages just marked seen whose sender asked for one. Called inside
   * the transaction that marked them (it only writes rows and wakes the sender), so the state
   * change and the receipts owed commit together or not at all.
   */
  oweReadReceipts?(messages: readonly MessageRecord[]): void;
  /** Renders a reaction, edit or delete request of ours (`MailComposer.renderControl`). */
  renderControl?(
    control: ChatControl,
    recipients: readonly ContactRecord[],
    ephemeralTimer: number,
  ): Promise<RenderedMail>;
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
  /** Absent while the mail transport is not running: `send_msg` then answers -1. */
  readonly outgoing?: OutgoingRenderer;
  /** Absent while the mail transport is not running: SecureJoin methods then answer -1. */
  readonly secureJoin?: SecureJoinService;
  /** Absent while the mail transport is not running: the protected-file methods then answer -1. */
  readonly protectedFiles?: ProtectedFiles;
}
