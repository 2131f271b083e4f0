/**
 * `GET /health`: the liveness probe. It answers 200 from a cheap in-memory report (no database,
 * network or file I/O), so orchestrator probes never queue behind real work (docs/contract.md
 * §4.1).
 */
import type { Context } from "hono";
import { Connectivity, GATEWAY_VERSION, SERVICE_NAME } from "../constants.ts";
import type { EventBus } from "../events/bus.ts";
import type { Services } from "../services.ts";
import { ConfigKey, type DiskWord } from "../store/mod.ts";
import type { MailError } from "../transport/mail_problem.ts";

/**
 * The `/health` body: the product's `status`, `service`, `version`
 * (docs/product-compat.md#health-body), then extras.
 */
export interface HealthReport {
  readonly status: "ok";
  /** `privitty-edged`, the daemon name the product publishes. */
  readonly service: string;
  readonly version: string;
  /** Connectivity level (docs/contract.md §3.2). */
  readonly connectivity: number;
  /**
   * The mail side in one word, from `connectivity`: the daemon is alive (`status` "ok") even when
   * its relay is not, so a probe that only checks the status code does not restart it for that.
   */
  readonly mail: MailState;
  /**
   * Only while the last IMAP or SMTP connection failed for a reason the operator can fix:
   * `tls_clock`, the relay's certificate is expired or not yet valid at this device's clock.
   * Gone after the next connection that works.
   */
  readonly mail_error?: MailError;
  /** The sentence for `mail_error` (what was seen, at which device time, what to check). */
  readonly mail_detail?: string;
  /**
   * The data directory's disk: `full` from a write that found it full (messaging pauses: mail
   * stays on the relay, calls that need space answer -1) until a write succeeds again.
   */
  readonly disk: DiskWord;
  /** Seconds since the daemon started serving. */
  readonly uptime_s: number;
  /** The account address, once provisioned. */
  readonly addr?: string;
  /** Open `/events` streams; the route fills it in. */
  readonly sse_clients?: number;
}

/** How the relay looks from here: 0 → not_configured, below 2000 → unreachable, … */
export type MailState = "not_configured" | "unreachable" | "connecting" | "connected";

/** Maps a connectivity level (docs/contract.md §3.2 bands) to the `/health` `mail` word. */
export function mailState(level: number): MailState {
  if (level <= Connectivity.NOT_CONFIGURED) return "not_configured";
  if (level < Connectivity.CONNECTING) return "unreachable";
  if (level < Connectivity.WORKING) return "connecting";
  return "connected";
}

/**
 * A `health()` callback over the services: the address is read once, here (it is fixed after
 * provisioning), so each probe touches memory only.
 */
export function serviceHealth(services: Services): () => HealthReport {
  const addr = services.store.config.get(ConfigKey.ADDR);
  return () => {
    const connectivity = services.connectivity.level();
    const problem = services.connectivity.mailProblem?.();
    return {
      status: "ok",
      service: SERVICE_NAME,
      version: GATEWAY_VERSION,
      connectivity,
      mail: mailState(connectivity),
      ...(problem === undefined ? {} : { mail_error: problem.error, mail_detail: problem.detail }),
      disk: services.store.disk.word,
      uptime_s: Math.max(0, Math.floor((Date.now() - services.startedAt) / 1000)),
      ...(addr === undefined ? {} : { addr }),
    };
  };
}

/** Builds the `/health` handler. */
export function healthHandler(health: () => HealthReport, bus: EventBus) {
  return (c: Context): Response =>
    // No extra headers: the probe is hit often and Content-Type alone keeps the fast path.
    c.json({ ...health(), sse_clients: bus.subscriberCount });
}
