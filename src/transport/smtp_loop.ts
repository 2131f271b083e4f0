/**
 * The SMTP outbox loop: sends due mails of a queue over one pooled SMTP transport, several at a
 * time, and reports each outcome back (sent, retry later, or give up). Its own pauses run on a
 * monotonic clock; the queue's stored times are wall-clock times, pulled back when the wall
 * clock jumps (clock.ts). Never throws.
 */
import { Buffer } from "node:buffer";
import { createReadStream } from "node:fs";
import { type Readable, Transform } from "node:stream";
import nodemailer from "nodemailer";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { SEND_STREAM_GC } from "../memory/young_gc.ts";
import { ClockJumpWatch, type MonotonicClock, monotonicNow } from "./clock.ts";
import { type BackoffBounds, backoffDelay, maxBackoffDelay } from "./imap_loop.ts";
import { LinkProblem, type MailProblemSink } from "./mail_problem.ts";
import { OutcomeBacklog } from "./outcome_backlog.ts";
import { describeEndpoint, type Endpoint } from "./server_params.ts";
import { smtpOptions, smtpReason } from "./smtp_client.ts";
import { probeSmtpSizeLimit } from "./smtp_size.ts";
import { classifySmtpError } from "./smtp_errors.ts";
import {
  isUnverifiedCertificate,
  type TlsClockFault,
  tlsClockFault,
  tlsClockProblem,
} from "./tls_clock.ts";
import { probeTlsClock } from "./tls_clock_probe.ts";

const log = logger("smtp");

/** One queued mail as the loop sees it. */
export interface QueuedMail {
  readonly id: number;
  readonly envelopeFrom: string;
  readonly recipients: readonly string[];
  /** The mail, unless it waits in a spool file. */
  readonly raw: Uint8Array;
  /** Absolute path of the spool file holding the mail (sent as a stream), when `raw` does not. */
  readonly spoolPath?: string | undefined;
  /** Failed attempts that got an SMTP answer (4xx) so far; connection failures do not count. */
  readonly attempts: number;
}

/** The outbox as the loop needs it (core wires it to store/outbox_store.ts and message states). */
export interface OutboxQueue {
  /** Mails due at nowMs, oldest first, at most limit. */
  due(nowMs: number, limit: number): readonly QueuedMail[];
  /** When the next mail is due (Unix ms), or undefined when empty. */
  nextDueAt(): number | undefined;
  /**
   * Makes mails due later than `nowMs + maxAheadMs` due at `nowMs` (times a wall clock that ran
   * ahead left behind); returns how many.
   */
  pullBack(nowMs: number, maxAheadMs: number): number;
  /** The relay accepted it (the caller removes the row and moves the message state 10→20). */
  sent(id: number): void;
  /**
   * Temporary failure: retry at nextTryAt. `counted`: it counts toward the give-up limit (a 4xx
   * answer to this mail does; a relay that could not be reached or logged into does not, so a
   * long outage cannot use up a mail's attempts).
   */
  retry(id: number, error: string, nextTryAt: number, counted: boolean): void;
  /** Permanent failure (5xx answer such as 523 Encryption Needed, or too many attempts): give up. */
  gaveUp(id: number, error: string): void;
}

/**
 * What the loop hands to the transport: the envelope and the mail's bytes, unchanged (a stream
 * of a spool file for a large mail).
 */
export interface OutgoingMail {
  readonly envelope: { readonly from: string; readonly to: string[] };
  readonly raw: Buffer | Readable;
}

/** A (pooled) SMTP transport; nodemailer's fits, tests pass fakes. */
export interface SmtpSender {
  /** Resolves when the relay accepted the mail (`rejected`: recipients it refused). */
  sendMail(mail: OutgoingMail): Promise<{ readonly rejected?: readonly unknown[] }>;
  close(): void;
}

/** Options of {@link SmtpLoop}. */
export interface SmtpLoopOptions {
  readonly endpoint: Endpoint;
  readonly password: string;
  readonly queue: OutboxQueue;
  /** Gets `SmtpConnected` on the first accepted mail, and on the first after a connection failure. */
  readonly events?: EventSink;
  /** Retry back-off after a 4xx answer, by the mail's attempts (default 1 s … 5 min). */
  readonly backoff?: BackoffBounds;
  /** Pause after a connection failure (default 1 s … 30 s; its max never exceeds `backoff.max`). */
  readonly connectionBackoff?: BackoffBounds;
  /** Failed attempts with an SMTP answer after which a mail is given up (default 20). */
  readonly maxAttempts?: number;
  /** Mails sent at once, and the pool's connection limit (default 4). */
  readonly concurrency?: number;
  /** The wall clock (Unix ms) the queue's times are in; tests may replace it. */
  readonly now?: () => number;
  /** The clock the loop's own pauses are measured on (default `performance.now`). */
  readonly monotonic?: MonotonicClock;
  /** Told when sending fails because of this device's clock (TLS), and when that is over. */
  readonly problems?: MailProblemSink | undefined;
  /**
   * A second look at a certificate `node:tls` could not verify (default: a rustls handshake to
   * `endpoint`, tls_clock_probe.ts); tests pass fakes.
   */
  readonly tlsProbe?: () => Promise<TlsClockFault | undefined>;
  /** Makes the transport (default: a nodemailer pool for `endpoint`); for tests. */
  readonly transportFactory?: () => SmtpSender;
  /**
   * Asks the relay for its message size limit (SMTP SIZE, RFC 1870); default: an EHLO on
   * `endpoint` (smtp_size.ts), none when `transportFactory` is given and this is not.
   */
  readonly sizeProbe?: () => Promise<number | undefined>;
  /**
   * Told what the relay's SIZE said (undefined: no limit named) when the loop starts and each
   * time it connects again after a connection failure.
   */
  readonly onSizeLimit?: (bytes: number | undefined) => void;
}

/**
 * A spool file as a stream for the transport; what passed through is young garbage (its chunks,
 * nodemailer's dot-stuffed copies, TLS records): collected as it goes, not once ~64 MB piled up.
 */
function spoolStream(path: string): Readable {
  // A transform, not a "data" listener: that would start the flow before the transport reads.
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      SEND_STREAM_GC.note(chunk.length);
      done(null, chunk);
    },
  });
  const file = createReadStream(path);
  file.on("error", (err) => counted.destroy(err));
  return file.pipe(counted);
}

/** Longest single wait: a row queued without `wake()`, or a wall-clock jump, is seen within it. */
const MAX_WAIT_MS = 10_000;

/** Longest wait while outcomes wait to be recorded (the disk may have space again). */
const UNRECORDED_RETRY_MS = 1_000;

/** Waits for `kick()`, a timeout or an abort; a kick while nobody waits ends the next wait. */
class Waker {
  #done: (() => void) | undefined;
  #kicked = false;

  kick(): void {
    if (this.#done) this.#done();
    else this.#kicked = true;
  }

  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#kicked || signal.aborted) {
      this.#kicked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#done = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.#done = done;
    });
  }
}

/** A transport and its sends in flight; a retired one is closed once they have settled. */
interface Lease {
  readonly sender: SmtpSender;
  active: number;
  retired: boolean;
}

/** The outbox loop: drains due mails, sleeps until the next one is due or `wake()`. */
export class SmtpLoop {
  readonly #opts: SmtpLoopOptions;
  readonly #server: string;
  readonly #concurrency: number;
  readonly #maxAttempts: number;
  readonly #bounds: BackoffBounds;
  readonly #netBounds: BackoffBounds;
  readonly #now: () => number;
  readonly #mono: MonotonicClock;
  readonly #jumps: ClockJumpWatch;
  readonly #tlsProbe: () => Promise<TlsClockFault | undefined>;
  readonly #problem: LinkProblem;
  /** Bumped on each outcome, so a probe that answers late does not overwrite a newer one. */
  #problemGen = 0;
  /** The queue's times are checked at the first look and after each jump (until that worked). */
  #pullBackPending = true;
  readonly #inflight = new Set<number>();
  /** Outcomes the queue could not record yet (a full disk): those rows are not sent again. */
  readonly #unrecorded = new OutcomeBacklog();
  readonly #waker = new Waker();
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #lease: Lease | undefined;
  #connFailures = 0;
  /** Monotonic ms until which the loop pauses after a connection failure. */
  #holdUntil = 0;
  #connected = false;
  /** Transports made so far: every one after the first is a reconnect. */
  #senders = 0;
  #probing = false;
  #idle = false;
  #idleWaiters: (() => void)[] = [];
  readonly #counts = { sent: 0, retried: 0, gaveUp: 0 };

  constructor(opts: SmtpLoopOptions) {
    this.#opts = opts;
    this.#server = describeEndpoint(opts.endpoint);
    this.#concurrency = Math.max(1, opts.concurrency ?? 4);
    this.#maxAttempts = Math.max(1, opts.maxAttempts ?? 20);
    this.#bounds = opts.backoff ?? { min: 1_000, max: 300_000 };
    const net = opts.connectionBackoff ?? { min: 1_000, max: 30_000 };
    this.#netBounds = { min: net.min, max: Math.min(net.max, this.#bounds.max) };
    this.#now = opts.now ?? Date.now;
    this.#mono = opts.monotonic ?? monotonicNow;
    this.#jumps = new ClockJumpWatch(this.#now, this.#mono);
    this.#tlsProbe = opts.tlsProbe ?? (() => probeTlsClock(opts.endpoint));
    this.#problem = new LinkProblem("smtp", log, opts.problems);
  }

  /** Starts the loop (once): it first drains everything due, e.g. what a restart left queued. */
  start(signal: AbortSignal): void {
    if (signal.aborted) this.#abort.abort();
    else signal.addEventListener("abort", () => this.#abort.abort(), { once: true });
    if (this.#running === undefined) this.#learnSizeLimit();
    this.#running ??= this.#run().catch((err) =>
      log.error("SMTP loop ended unexpectedly", { error: smtpReason(err) })
    );
  }

  /** Asks the relay for its SIZE limit in the background and reports it (one probe at a time). */
  #learnSizeLimit(): void {
    const { onSizeLimit } = this.#opts;
    const probe = this.#opts.sizeProbe ??
      (this.#opts.transportFactory === undefined
        ? () => probeSmtpSizeLimit(this.#opts.endpoint, this.#opts.password)
        : undefined);
    if (onSizeLimit === undefined || probe === undefined || this.#probing) return;
    this.#probing = true;
    probe().then(
      (bytes) => {
        log.debug("relay message size limit", { server: this.#server, bytes: bytes ?? null });
        onSizeLimit(bytes);
      },
      (err) => log.debug("relay size limit not learned", { error: smtpReason(err) }),
    ).finally(() => this.#probing = false);
  }

  /** A mail was queued: look at the queue at once (a connection back-off still applies). */
  wake(): void {
    this.#idle = false;
    this.#waker.kick();
  }

  /**
   * Resolves when nothing is in flight and nothing can be sent now: the queue is empty, its next
   * mail is due later, or the loop pauses after a connection failure (or the loop has ended).
   */
  idle(): Promise<void> {
    if (this.#idle || !this.#running || this.#abort.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops the loop; resolves once the sends in flight have settled and been reported. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#running;
    this.#setIdle(true);
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let wait: number;
      try {
        wait = this.#fill();
      } catch (err) {
        log.error("outbox queue failed", { error: smtpReason(err) });
        wait = this.#bounds.min;
      }
      if (this.#unrecorded.size > 0) wait = Math.min(wait, UNRECORDED_RETRY_MS);
      await this.#waker.wait(Math.min(wait, MAX_WAIT_MS), signal);
    }
    while (this.#inflight.size > 0) {
      await this.#waker.wait(MAX_WAIT_MS, new AbortController().signal);
    }
    this.#unrecorded.retry(); // a last try: what stays unwritten is sent again after a restart
    if (this.#lease) this.#retire(this.#lease);
  }

  /** Starts sends for due mails while slots are free; returns the ms until it is worth looking. */
  #fill(): number {
    const now = this.#now();
    const mono = this.#mono();
    this.#watchClock(now);
    if (mono < this.#holdUntil) {
      this.#setIdle(this.#inflight.size === 0);
      return this.#holdUntil - mono;
    }
    this.#unrecorded.retry();
    const width = this.#connFailures > 0 ? 1 : this.#concurrency; // one probe after a failure
    if (this.#inflight.size < width) {
      const skip = this.#inflight.size + this.#unrecorded.size;
      for (const mail of this.#opts.queue.due(now, width + skip)) {
        if (this.#inflight.size >= width) break;
        if (!this.#inflight.has(mail.id) && !this.#unrecorded.has(mail.id)) this.#launch(mail);
      }
    }
    if (this.#inflight.size >= width) return MAX_WAIT_MS; // a settling send kicks the loop
    const next = this.#opts.queue.nextDueAt();
    const nothingDue = next === undefined || next > now;
    this.#setIdle(this.#inflight.size === 0 && nothingDue);
    if (next === undefined) return MAX_WAIT_MS;
    if (next > now) return next - now;
    return this.#bounds.min; // the due rows are in flight; rows due later are not visible
  }

  /**
   * At the first look and after a wall-clock jump: rows due further ahead than the longest
   * back-off were timed by a clock that ran ahead; they become due now. A jump also ends the
   * pause: the failure may have been the clock's (a certificate "not yet valid" or "expired").
   */
  #watchClock(now: number): void {
    const jump = this.#jumps.jumped();
    if (jump !== 0) {
      this.#holdUntil = 0;
      this.#pullBackPending = true;
    }
    if (!this.#pullBackPending) return;
    const pulled = this.#opts.queue.pullBack(now, maxBackoffDelay(this.#bounds));
    this.#pullBackPending = false;
    if (jump !== 0 || pulled > 0) {
      log.info(jump !== 0 ? "wall clock jumped; outbox times checked" : "outbox times checked", {
        jump_ms: Math.round(jump),
        pulled_back: pulled,
      });
    }
  }

  #setIdle(idle: boolean): void {
    if (idle && !this.#idle) {
      const { sent, retried, gaveUp } = this.#counts;
      if (sent + retried + gaveUp > 0) log.info("outbox pass done", { sent, retried, gaveUp });
      Object.assign(this.#counts, { sent: 0, retried: 0, gaveUp: 0 });
    }
    this.#idle = idle;
    if (!idle) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  #launch(mail: QueuedMail): void {
    const lease = this.#lease ??= { sender: this.#createSender(), active: 0, retired: false };
    lease.active++;
    this.#inflight.add(mail.id);
    void this.#send(lease, mail).finally(() => {
      lease.active--;
      if (lease.retired && lease.active === 0) lease.sender.close();
      this.#inflight.delete(mail.id);
      this.#waker.kick();
    });
  }

  #createSender(): SmtpSender {
    if (this.#senders++ > 0) this.#learnSizeLimit();
    if (this.#opts.transportFactory) return this.#opts.transportFactory();
    const transport = nodemailer.createTransport({
      ...smtpOptions(this.#opts.endpoint, this.#opts.password, true),
      maxConnections: this.#concurrency,
    });
    transport.on("error", (err) => log.warn("SMTP transport error", { error: smtpReason(err) }));
    return transport;
  }

  /** Sends one mail and reports the outcome to the queue; never rejects. */
  async #send(lease: Lease, mail: QueuedMail): Promise<void> {
    let rejected = 0;
    let bytes = mail.raw.length;
    try {
      if (mail.spoolPath !== undefined) bytes = (await Deno.stat(mail.spoolPath)).size;
    } catch (err) {
      // The rendered mail is gone: nothing can ever send it.
      const reason = `the rendered mail is missing from the spool: ${smtpReason(err)}`;
      this.#counts.gaveUp++;
      return this.#report(mail.id, () => this.#opts.queue.gaveUp(mail.id, reason));
    }
    try {
      const info = await lease.sender.sendMail({
        envelope: { from: mail.envelopeFrom, to: [...mail.recipients] },
        raw: mail.spoolPath === undefined ? Buffer.from(mail.raw) : spoolStream(mail.spoolPath),
      });
      rejected = info?.rejected?.length ?? 0;
    } catch (err) {
      let record: () => void;
      try {
        record = this.#failed(lease, mail, err);
      } catch (bug) {
        return log.error("outbox update failed", { id: mail.id, error: smtpReason(bug) });
      }
      return this.#report(mail.id, record);
    }
    this.#report(mail.id, () => this.#opts.queue.sent(mail.id));
    this.#counts.sent++;
    this.#connFailures = 0;
    this.#holdUntil = 0;
    this.#problemGen++;
    this.#problem.set(undefined);
    const to = mail.recipients.length;
    if (rejected > 0) log.warn("relay refused some recipients", { id: mail.id, rejected, of: to });
    log.debug("mail sent", { id: mail.id, bytes });
    if (this.#connected) return;
    this.#connected = true;
    log.info("connected", { server: this.#server });
    this.#opts.events?.publish({ kind: "SmtpConnected", msg: `SMTP connected to ${this.#server}` });
  }

  /** Records a send's outcome; one the queue cannot write now waits (see OutcomeBacklog). */
  #report(id: number, fn: () => void): void {
    this.#unrecorded.record(
      id,
      fn,
      (err) =>
        log.error("outbox update failed; the mail is not sent again before it is recorded", {
          id,
          error: smtpReason(err),
        }),
    );
  }

  /** Notes a failed send (logs, back-off) and returns the queue write that records it. */
  #failed(lease: Lease, mail: QueuedMail, err: unknown): () => void {
    const kind = classifySmtpError(err);
    const reason = smtpReason(err);
    const now = this.#now();
    const mono = this.#mono();
    const { queue } = this.#opts;
    if (kind === "permanent") {
      this.#counts.gaveUp++;
      log.warn("relay refused a mail; giving up", { id: mail.id, reason });
      return () => queue.gaveUp(mail.id, reason);
    }
    if (kind === "connection") {
      this.#connectionFailed(lease, now, mono, reason, err);
      this.#counts.retried++;
      // Due when the pause ends, in the queue's wall-clock time.
      const at = now + Math.max(0, this.#holdUntil - mono);
      return () => queue.retry(mail.id, reason, at, false);
    }
    if (mail.attempts + 1 >= this.#maxAttempts) {
      this.#counts.gaveUp++;
      log.warn("giving up a mail", { id: mail.id, attempts: mail.attempts + 1, reason });
      const why = `${reason} (gave up after ${mail.attempts + 1} attempts)`;
      return () => queue.gaveUp(mail.id, why);
    }
    const delay = backoffDelay(mail.attempts, this.#bounds);
    this.#counts.retried++;
    log.info("mail deferred", { id: mail.id, attempt: mail.attempts + 1, in_ms: delay, reason });
    return () => queue.retry(mail.id, reason, now + delay, true);
  }

  /** Drops the transport and pauses the whole loop (once per failure, however many sends saw it). */
  #connectionFailed(lease: Lease, now: number, mono: number, reason: string, err: unknown): void {
    this.#connected = false;
    if (this.#lease === lease) this.#retire(lease);
    if (mono < this.#holdUntil) return;
    const delay = backoffDelay(this.#connFailures, this.#netBounds);
    this.#connFailures++;
    this.#holdUntil = mono + delay;
    this.#noteTlsClock(err, now);
    const login = (err as { code?: unknown })?.code === "EAUTH";
    (login ? log.error : log.warn)(
      login ? "SMTP login refused; mail stays queued" : "SMTP connection failed; pausing",
      { server: this.#server, in_ms: delay, failures: this.#connFailures, reason },
    );
  }

  /** Reports whether this connection failure was the clock's (TLS), asking rustls when unsure. */
  #noteTlsClock(err: unknown, now: number): void {
    const gen = ++this.#problemGen;
    const settle = (fault: TlsClockFault | undefined) => {
      if (gen === this.#problemGen) this.#problem.set(fault && tlsClockProblem(fault, now));
    };
    const fault = tlsClockFault(err);
    if (fault || !isUnverifiedCertificate(err)) return settle(fault);
    this.#tlsProbe().then(settle, () => settle(undefined));
  }

  #retire(lease: Lease): void {
    if (this.#lease === lease) this.#lease = undefined;
    lease.retired = true;
    if (lease.active === 0) lease.sender.close();
  }
}
