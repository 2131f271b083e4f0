/**
 * Keeps one IMAP connection to INBOX alive with IDLE: reports connectivity (2000 connecting,
 * 4000 connected, 1000 after a drop), reconnects with jittered exponential back-off, sends a NOOP
 * heartbeat that also re-issues IDLE, tells listeners when new mail exists and drains INBOX into
 * reception one mail at a time between IDLEs (inbox_drain.ts). Never throws.
 */
import { sleep } from "../sleep.ts";
import { Connectivity } from "../constants.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { type MonotonicClock, monotonicNow } from "./clock.ts";
import { createImapClient, imapReason } from "./imap_client.ts";
import { type DrainLimits, InboxDrain, type KeepAlive, type MailSink } from "./inbox_drain.ts";
import { LinkProblem, type MailProblemSink } from "./mail_problem.ts";
import { describeEndpoint, type ServerParams } from "./server_params.ts";
import { tlsClockFault, tlsClockProblem } from "./tls_clock.ts";

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
  /** When set, INBOX is drained into it, one mail at a time (see inbox_drain.ts). */
  readonly reception?: MailSink;
  /** Limits of the drain (default `DEFAULT_DRAIN_LIMITS`). */
  readonly drainLimits?: DrainLimits;
  /**
   * Heartbeat interval while idle (default 10 s): IDLE is broken, a NOOP must answer within
   * `heartbeatTimeoutMs` (default 5 s), and IDLE is issued again — so IDLE never runs longer than
   * this (servers may end an IDLE after 30 min) and a hung relay or a silently dead link is
   * noticed within 15 s. A relay whose process dies closes the socket: noticed at once (measured
   * ~20 ms), without the heartbeat. While a mail is being processed the same NOOP runs at the
   * same interval (the drain's own commands are never queued behind a heartbeat, nor it behind
   * them).
   */
  readonly heartbeatMs?: number;
  readonly heartbeatTimeoutMs?: number;
  /** Back-off bounds in ms (default 500 … 30 000). */
  readonly backoff?: BackoffBounds;
  /** The clock the drain's retry times are measured on (default `performance.now`). */
  readonly monotonic?: MonotonicClock;
  /** Told when connecting fails because of this device's clock (TLS), and when that is over. */
  readonly problems?: MailProblemSink;
  /** The wall clock named in such a report (default `Date.now`). */
  readonly now?: () => number;
}

/** Bounds of the reconnect back-off. */
export interface BackoffBounds {
  readonly min: number;
  readonly max: number;
}

/** The back-off's jitter: each delay is its base ± this share. */
const BACKOFF_JITTER = 0.2;

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
  return Math.round(base * (1 - BACKOFF_JITTER + random() * 2 * BACKOFF_JITTER));
}

/** The longest delay {@link backoffDelay} returns for `bounds` (`max` with the jitter on top). */
export function maxBackoffDelay(bounds: BackoffBounds): number {
  return Math.round(bounds.max * (1 + BACKOFF_JITTER));
}

type Client = ReturnType<typeof createImapClient>;

/** The reconnecting IMAP IDLE loop. */
export class ImapLoop {
  readonly #opts: ImapLoopOptions;
  readonly #listeners = new Set<NewMailListener>();
  #client: Client | undefined;
  #running: Promise<void> | undefined;
  readonly #abort = new AbortController();
  readonly #mono: MonotonicClock;
  readonly #problem: LinkProblem;

  constructor(opts: ImapLoopOptions) {
    this.#opts = opts;
    this.#mono = opts.monotonic ?? monotonicNow;
    this.#problem = new LinkProblem("imap", log, opts.problems);
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
      const worked = await this.#session(signal);
      if (signal.aborted) break;
      failures = worked ? 0 : failures + 1;
      this.#opts.connectivity.set(Connectivity.NOT_CONNECTED);
      const delay = backoffDelay(failures, bounds);
      log.info("reconnecting", { in_ms: delay, attempt: failures + 1 });
      await sleep(delay, signal);
    }
    this.#opts.connectivity.set(Connectivity.NOT_CONNECTED);
  }

  /**
   * One connection's life; resolves true if it got connected and then ended without an error of
   * its own (the link dropped): a session whose work failed backs off like a failed connect, so
   * a failure that repeats on every connection cannot rebuild it in a storm.
   */
  async #session(signal: AbortSignal): Promise<boolean> {
    const { params, password, connectivity } = this.#opts;
    const server = describeEndpoint(params.imap);
    connectivity.set(Connectivity.CONNECTING);
    const t0 = this.#mono();
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
    const inbox: InboxState = { pending: true, wake: () => {} };
    client.on("exists", (d: { count: number }) => {
      this.#notify(d.count);
      inbox.pending = true;
      inbox.wake();
    });
    let wasConnected = false;
    try {
      await client.connect();
      const box = await client.mailboxOpen("INBOX");
      wasConnected = true;
      connectivity.set(Connectivity.CONNECTED);
      this.#problem.set(undefined);
      this.#opts.events.publish({ kind: "ImapConnected", msg: `IMAP connected to ${server}` });
      log.info("connected", { server, ms: Math.round(this.#mono() - t0), exists: box.exists });
      this.#notify(box.exists);
      await this.#serve(client, signal, inbox, closedP, () => closed);
      if (!signal.aborted) log.warn("IMAP connection lost", { server });
      return true;
    } catch (err) {
      if (!signal.aborted) {
        log.warn("IMAP session failed", { server, error: imapReason(err) });
        if (!wasConnected) this.#noteTlsClock(err);
      }
    } finally {
      client.close();
      this.#client = undefined;
    }
    return false;
  }

  /** A failed connection's reason, when it is the clock's (TLS); any other reason clears it. */
  #noteTlsClock(err: unknown): void {
    const fault = tlsClockFault(err);
    this.#problem.set(fault && tlsClockProblem(fault, (this.#opts.now ?? Date.now)()));
  }

  /**
   * The connected loop, one thing at a time on the connection: drain INBOX when mail is pending
   * (no heartbeat queues behind that work: it keeps the connection alive itself), else IDLE until
   * new mail, the heartbeat or a due retry, then a NOOP that must answer within the timeout.
   * Returns when the connection is gone or on abort; throws when draining fails.
   */
  async #serve(
    client: Client,
    signal: AbortSignal,
    inbox: InboxState,
    closedP: Promise<void>,
    isClosed: () => boolean,
  ): Promise<void> {
    const heartbeat = Math.min(this.#opts.heartbeatMs ?? 10_000, MAX_IDLE_MS);
    const answerWithin = this.#opts.heartbeatTimeoutMs ?? 5_000;
    const reception = this.#opts.reception;
    const drain = reception && new InboxDrain(reception, this.#opts.drainLimits, this.#mono);
    const stopped = () => signal.aborted || isClosed();
    const keepAlive = this.#keepAlive(client, {
      everyMs: heartbeat,
      answerWithin,
      closedP,
      stopped,
    });
    const aborted = new Promise<void>((r) =>
      signal.addEventListener("abort", () => r(), { once: true })
    );
    while (!stopped()) {
      if (drain && inbox.pending) {
        inbox.pending = false;
        await drain.drain(client, keepAlive, stopped);
        continue;
      }
      // Each round's timers end with the round (`tick`), so none outlive a short IDLE.
      const tick = new AbortController();
      const roundSignal = AbortSignal.any([signal, tick.signal]);
      const woken = new Promise<void>((r) => inbox.wake = r);
      const idle = client.idle().catch(() => undefined);
      const wait = Math.min(heartbeat, drain?.nextRetryIn() ?? Infinity);
      await Promise.race([idle, sleep(wait, roundSignal), closedP, aborted, woken]);
      inbox.wake = () => {};
      if (stopped()) return tick.abort();
      const outcome = await noopWithin(client, answerWithin, roundSignal, closedP);
      tick.abort();
      if (outcome !== "ok") {
        if (!signal.aborted) {
          log.warn("IMAP heartbeat failed; dropping the connection", { outcome });
        }
        return;
      }
      if (drain && drain.nextRetryIn() === 0) inbox.pending = true;
    }
  }

  /**
   * Wraps long work (one mail's processing) with a NOOP every `everyMs` while it runs: the
   * server sees a live client and a dead link is noticed; a NOOP that does not answer within
   * `answerWithin` closes the connection (the work still finishes and commits; the mail is not
   * deleted and comes back as a duplicate after the reconnect).
   */
  #keepAlive(
    client: Client,
    o: { everyMs: number; answerWithin: number; closedP: Promise<void>; stopped: () => boolean },
  ): KeepAlive {
    const { everyMs, answerWithin, closedP, stopped } = o;
    return async <T>(work: Promise<T>): Promise<T> => {
      const done = new AbortController();
      (async () => {
        while (!done.signal.aborted && !stopped()) {
          await sleep(everyMs, done.signal);
          if (done.signal.aborted || stopped()) return;
          const outcome = await noopWithin(client, answerWithin, done.signal, closedP);
          if (outcome === "ok") log.debug("keep-alive NOOP answered during long processing");
          else if (!done.signal.aborted && !stopped()) {
            log.warn("IMAP keep-alive failed; dropping the connection", { outcome });
            client.close();
            return;
          }
        }
      })();
      try {
        return await work;
      } finally {
        done.abort();
      }
    };
  }
}

/** Whether INBOX has mail to drain, and how to wake the loop from IDLE when it has. */
interface InboxState {
  pending: boolean;
  wake: () => void;
}

/** A NOOP raced against `answerWithin` and the connection's close. */
async function noopWithin(
  client: Client,
  answerWithin: number,
  signal: AbortSignal,
  closedP: Promise<void>,
): Promise<"ok" | "failed" | "timeout" | "closed"> {
  const noop = client.noop().then(() => "ok" as const, () => "failed" as const);
  return await Promise.race([
    noop,
    sleep(answerWithin, signal).then(() => "timeout" as const),
    closedP.then(() => "closed" as const),
  ]);
}
