/**
 * Keeps one IMAP connection to INBOX alive with IDLE: reports connectivity (2000 connecting,
 * 4000 connected, 1000 after a drop), reconnects with jittered exponential back-off, sends a NOOP
 * heartbeat that also re-issues IDLE, and tells listeners when new mail exists. Never throws.
 */
import { Connectivity } from "../constants.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { createImapClient, imapReason } from "./imap_client.ts";
import { type DeliverMail, drainInbox } from "./inbox_drain.ts";
import { describeEndpoint, type ServerParams } from "./server_params.ts";

const log = logger("imap");

/** Where the loop reports its level (core/connectivity.ts's ConnectivityMonitor). */
export interface ConnectivitySetter {
  set(level: number): void;
}

/** Called with the INBOX message count after connecting and whenever it grows. */
export type NewMailListener = (exists: number) => void;

/** Options of {@link ImapLoop}. */
export interface ImapLoopOptions {
  readonly params: ServerParams;
  readonly password: string;
  readonly connectivity: ConnectivitySetter;
  readonly events: EventSink;
  /** A first new-mail listener (more via {@link ImapLoop.onNewMail}). */
  readonly onNewMail?: NewMailListener;
  /** When set, every message is handed to it and deleted once it resolved (see inbox_drain.ts). */
  readonly deliver?: DeliverMail;
  /**
   * Heartbeat interval while idle (default 10 s): IDLE is broken, a NOOP must answer within
   * `heartbeatTimeoutMs` (default 5 s), and IDLE is issued again — so IDLE never runs longer than
   * this (servers may end an IDLE after 30 min) and a hung relay or a silently dead link is
   * noticed within 15 s. A relay whose process dies closes the socket: noticed at once (measured
   * ~20 ms), without the heartbeat.
   */
  readonly heartbeatMs?: number;
  readonly heartbeatTimeoutMs?: number;
  /** Back-off bounds in ms (default 500 … 30 000). */
  readonly backoff?: BackoffBounds;
}

/** Bounds of the reconnect back-off. */
export interface BackoffBounds {
  readonly min: number;
  readonly max: number;
}

/** Most IDLE may last before it is re-issued (RFC 2177 servers may end it after 30 min). */
const MAX_IDLE_MS = 25 * 60_000;

/**
 * Delay before reconnect attempt number `failures` (0 after a connection that worked):
 * `min · 2^failures`, capped at `max`, jittered by ±20 %.
 */
export function backoffDelay(
  failures: number,
  bounds: BackoffBounds,
  random: () => number = Math.random,
): number {
  const base = Math.min(bounds.max, bounds.min * 2 ** Math.min(failures, 20));
  return Math.round(base * (0.8 + random() * 0.4));
}

type Client = ReturnType<typeof createImapClient>;

/** Resolves after `ms` or when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The reconnecting IMAP IDLE loop. */
export class ImapLoop {
  readonly #opts: ImapLoopOptions;
  readonly #listeners = new Set<NewMailListener>();
  #client: Client | undefined;
  #running: Promise<void> | undefined;
  readonly #abort = new AbortController();

  constructor(opts: ImapLoopOptions) {
    this.#opts = opts;
    if (opts.onNewMail) this.#listeners.add(opts.onNewMail);
  }

  /** Adds a listener for the INBOX message count; returns a function that removes it. */
  onNewMail(listener: NewMailListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts the loop in the background (once); it ends when `signal` aborts or on `stop()`. */
  start(signal: AbortSignal): void {
    if (signal.aborted) this.#abort.abort();
    else signal.addEventListener("abort", () => this.#abort.abort(), { once: true });
    this.#running ??= this.#run().catch((err) =>
      log.error("IMAP loop ended unexpectedly", { error: imapReason(err) })
    );
  }

  /** Stops the loop, closes the connection and resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#client?.close();
    await this.#running;
  }

  #notify(exists: number): void {
    for (const listener of this.#listeners) {
      try {
        listener(exists);
      } catch (err) {
        log.warn("new-mail listener failed", { error: imapReason(err) });
      }
    }
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    const bounds = this.#opts.backoff ?? { min: 500, max: 30_000 };
    let failures = 0;
    while (!signal.aborted) {
      const connected = await this.#session(signal);
      if (signal.aborted) break;
      failures = connected ? 0 : failures + 1;
      this.#opts.connectivity.set(Connectivity.NOT_CONNECTED);
      const delay = backoffDelay(failures, bounds);
      log.info("reconnecting", { in_ms: delay, attempt: failures + 1 });
      await sleep(delay, signal);
    }
    this.#opts.connectivity.set(Connectivity.NOT_CONNECTED);
  }

  /** One connection's life; resolves true if it got connected before it ended. */
  async #session(signal: AbortSignal): Promise<boolean> {
    const { params, password, connectivity } = this.#opts;
    const server = describeEndpoint(params.imap);
    connectivity.set(Connectivity.CONNECTING);
    const t0 = performance.now();
    const client = createImapClient(params.imap, password);
    this.#client = client;
    let closed = false;
    const closedP = new Promise<void>((resolve) =>
      client.on("close", () => {
        closed = true;
        resolve();
      })
    );
    client.on(
      "error",
      (err: unknown) => log.warn("IMAP connection error", { error: imapReason(err) }),
    );
    const drain = this.#drainer(client);
    client.on("exists", (d: { count: number }) => {
      this.#notify(d.count);
      drain();
    });
    let wasConnected = false;
    try {
      await client.connect();
      const box = await client.mailboxOpen("INBOX");
      wasConnected = true;
      connectivity.set(Connectivity.CONNECTED);
      this.#opts.events.publish({ kind: "ImapConnected", msg: `IMAP connected to ${server}` });
      log.info("connected", { server, ms: Math.round(performance.now() - t0), exists: box.exists });
      this.#notify(box.exists);
      drain();
      await this.#idleLoop(client, signal, closedP, () => closed);
      if (!signal.aborted) log.warn("IMAP connection lost", { server });
    } catch (err) {
      if (!signal.aborted) log.warn("IMAP session failed", { server, error: imapReason(err) });
    } finally {
      client.close();
      this.#client = undefined;
    }
    return wasConnected;
  }

  /** A trigger that runs inbox passes one at a time, with one more pass if mail came meanwhile. */
  #drainer(client: Client): () => void {
    const deliver = this.#opts.deliver;
    if (!deliver) return () => {};
    const skip = new Set<number>();
    let running = false;
    let again = false;
    const run = async () => {
      running = true;
      try {
        do {
          again = false;
          while (await drainInbox(client, deliver, skip) > 0) { /* until a pass finds nothing */ }
        } while (again);
      } catch (err) {
        log.warn("inbox pass failed", { error: imapReason(err) });
      } finally {
        running = false;
      }
    };
    return () => {
      if (running) again = true;
      else void run();
    };
  }

  /** IDLE until the heartbeat, then NOOP; returns when the connection is gone or on abort. */
  async #idleLoop(
    client: Client,
    signal: AbortSignal,
    closedP: Promise<void>,
    isClosed: () => boolean,
  ): Promise<void> {
    const heartbeat = Math.min(this.#opts.heartbeatMs ?? 10_000, MAX_IDLE_MS);
    const answerWithin = this.#opts.heartbeatTimeoutMs ?? 5_000;
    const aborted = new Promise<void>((r) =>
      signal.addEventListener("abort", () => r(), { once: true })
    );
    while (!signal.aborted && !isClosed()) {
      // Each round's timers end with the round (`tick`), so none outlive a short IDLE.
      const tick = new AbortController();
      const roundSignal = AbortSignal.any([signal, tick.signal]);
      const idle = client.idle().catch(() => undefined);
      await Promise.race([idle, sleep(heartbeat, roundSignal), closedP, aborted]);
      if (signal.aborted || isClosed()) return tick.abort();
      const noop = client.noop().then(() => "ok" as const, () => "failed" as const);
      const outcome = await Promise.race([
        noop,
        sleep(answerWithin, roundSignal).then(() => "timeout" as const),
        closedP.then(() => "closed" as const),
      ]);
      tick.abort();
      if (outcome !== "ok") {
        if (!signal.aborted) {
          log.warn("IMAP heartbeat failed; dropping the connection", { outcome });
        }
        return;
      }
    }
  }
}
