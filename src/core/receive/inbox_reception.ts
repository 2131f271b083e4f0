/**
 * What the IMAP drain hands INBOX mail to (it matches transport/inbox_drain.ts's `MailSink`):
 * the reception pipeline, an attempt count per mail in the store, the give-up record, the
 * quarantine of mails that kept failing (and the operator's retries of them, run one at a time
 * with the drain's deliveries), one INFO line per received mail (ids and sizes, never content),
 * and the size of each mail it processed told to the daemon's collector of burst garbage.
 */
import { diskFullError, GatewayError } from "../../errors.ts";
import { logger } from "../../log.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import { ConfigKey } from "../../store/config_store.ts";
import { DEFAULT_DRAIN_LIMITS } from "../../transport/inbox_drain.ts";
import { mailSize, type MailSource } from "../../mime/mail_source.ts";
import { sniffMessageId } from "./mail_reader.ts";
import type { ReceiveOutcome, Receiver } from "./pipeline.ts";

const log = logger("receive");

/** A mail in INBOX as the drain names it. */
export interface InboxMail {
  readonly uid: number;
  readonly uidValidity: string;
  readonly size: number;
}

function keyOf(m: InboxMail): string {
  return `${m.uidValidity}:${m.uid}`;
}

/** The ids an outcome carries, for the log line. */
function outcomeFields(o: ReceiveOutcome): Record<string, unknown> {
  switch (o.kind) {
    case "message":
      return { stored: o.outcome, msg_id: o.msgId, chat_id: o.chatId };
    case "receipt":
    case "control":
      return { changed: o.changed };
    case "securejoin":
      return { step: o.step };
    case "pdus":
      return { pdus: o.count };
    default:
      return {};
  }
}

/** Options of `InboxReception`. */
export interface InboxReceptionOptions {
  /**
   * Told the size of every mail the pipeline went through (or of the head of one given up on),
   * whether it succeeded or not: reading a mail leaves several copies of it behind (the fetched
   * bytes, the MIME text, the armor, the ciphertext, the plaintext, the attachment), which an idle
   * daemon would keep until V8's next full collection. The daemon's `BurstGc` adds it up.
   */
  readonly noteGarbage?: ((bytes: number) => void) | undefined;
}

/** What retrying a quarantined mail came to. */
export type QuarantineRetry =
  /** Reception took it (stored, or recorded as unusable for good); it left the quarantine. */
  | { readonly outcome: "received"; readonly kind: ReceiveOutcome["kind"] }
  /** It failed again and stays, with this reason. */
  | { readonly outcome: "quarantined"; readonly reason: string };

/** The least cap on one received mail, whatever the relay's limit (see {@link receivedMailCap}). */
export const MIN_RECEIVED_MAIL_CAP = 64 * 1024 * 1024;

/**
 * The largest mail reception fetches: twice the relay's message limit (learnt from SMTP `SIZE`
 * and stored as `max_message_bytes`), at least {@link MIN_RECEIVED_MAIL_CAP}. Reading a mail
 * takes bounded memory whatever its size; the cap bounds the disk and time one mail can take.
 */
export function receivedMailCap(relayLimit: number | undefined): number {
  const limit = relayLimit !== undefined && Number.isFinite(relayLimit) && relayLimit > 0
    ? relayLimit
    : 0;
  return Math.max(2 * limit, MIN_RECEIVED_MAIL_CAP);
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The drain's sink over one account's pipeline and store. */
export class InboxReception {
  readonly #noteGarbage: (bytes: number) => void;
  /** Attempts to take back (by mail key) that a full disk kept from being written. */
  readonly #owed = new Map<string, number>();
  /** The pipeline runs one mail at a time (the drain's and the operator's retries alike). */
  #tail: Promise<unknown> = Promise.resolve();

  /** Large mails are fetched into hidden temp files in the blob directory (blobs.ts). */
  readonly spool: { readonly dir: string; maxMailBytes(): number };

  constructor(
    private readonly ctx: CoreContext,
    private readonly receiver: Receiver,
    options: InboxReceptionOptions = {},
  ) {
    this.#noteGarbage = options.noteGarbage ?? (() => {});
    this.spool = {
      dir: ctx.blobDir,
      maxMailBytes: () => {
        const stored = ctx.store.config.get(ConfigKey.MAX_MESSAGE_BYTES);
        return receivedMailCap(stored === undefined ? undefined : Number(stored));
      },
    };
  }

  begin(m: InboxMail): number {
    const key = keyOf(m);
    const before = this.ctx.store.receiveAttempts.begin(key, nowSeconds(this.ctx));
    const owed = this.#owed.get(key) ?? 0;
    if (owed === 0) return before;
    // Attempts a full disk failed, which could not be taken back then: there is space now.
    this.#owed.delete(key);
    this.#forgive(key, owed);
    return Math.max(0, before - owed);
  }

  /** The attempt just begun failed because the disk is full: it does not count. */
  forgive(m: InboxMail): void {
    this.#forgive(keyOf(m), 1);
  }

  #forgive(key: string, n: number): void {
    try {
      this.ctx.store.receiveAttempts.forgive(key, n);
    } catch {
      this.#owed.set(key, (this.#owed.get(key) ?? 0) + n); // the disk is still full
    }
  }

  /** Whether the store last saw the disk full (the drain resumes once it is not). */
  diskFull(): boolean {
    return this.ctx.store.disk.word === "full";
  }

  failed(m: InboxMail, reason: string): void {
    this.ctx.store.receiveAttempts.failed(keyOf(m), reason);
  }

  /** Runs the pipeline (it commits or records the mail), then forgets the attempts. */
  async deliver(raw: MailSource, m: InboxMail): Promise<void> {
    const t0 = performance.now();
    let outcome: ReceiveOutcome;
    try {
      outcome = await this.#receive(raw);
    } catch (err) {
      // A blob write's ENOSPC is news for `/health` too (the database notes SQLite's own).
      const full = diskFullError(err);
      if (full === undefined) throw err;
      this.ctx.store.disk.noteFull(full.message);
      throw full;
    }
    this.ctx.store.receiveAttempts.clear(keyOf(m));
    // Fetched mail in → committed and published to the event bus (SSE writes on the next tick).
    log.info("mail processed", {
      outcome: outcome.kind,
      ...outcomeFields(outcome),
      uid: m.uid,
      bytes: mailSize(raw),
      pipeline_ms: Math.round((performance.now() - t0) * 100) / 100,
    });
  }

  /**
   * Keeps the whole mail in the quarantine (with the last failure's reason), forgets its
   * attempts, and announces it (`MailQuarantined`, after the commit).
   */
  quarantine(m: InboxMail, reason: string, raw: Uint8Array): Promise<void> {
    const key = keyOf(m);
    const messageId = sniffMessageId(raw);
    this.ctx.tx.run((emit) => {
      const attempts = this.ctx.store.receiveAttempts.attempts(key);
      const id = this.ctx.store.quarantine.add({
        messageId,
        reason,
        attempts,
        raw,
        at: nowSeconds(this.ctx),
      });
      this.ctx.store.receiveAttempts.clear(key);
      emit({ kind: "MailQuarantined", quarantineId: id, messageId, reason });
    });
    log.warn("mail quarantined", { message_id: messageId, bytes: raw.length, reason });
    return Promise.resolve();
  }

  /**
   * Runs quarantined mail `id` through the pipeline again (after the drain's current mail): it
   * leaves the quarantine when reception takes it, and stays with the new reason otherwise.
   * GatewayError when there is no such mail.
   */
  async retryQuarantined(id: number): Promise<QuarantineRetry> {
    const raw = this.ctx.store.quarantine.raw(id);
    if (raw === undefined) throw new GatewayError(`no quarantined mail with id ${id}`);
    let outcome: ReceiveOutcome;
    try {
      outcome = await this.#receive({ kind: "bytes", bytes: raw });
    } catch (err) {
      const reason = reasonOf(err);
      if (!this.ctx.store.quarantine.failedAgain(id, reason)) {
        throw new GatewayError(`quarantined mail ${id} was dropped while it was retried`);
      }
      log.warn("quarantined mail failed again", { quarantine_id: id, reason });
      return { outcome: "quarantined", reason };
    }
    this.ctx.store.quarantine.remove(id);
    log.info("quarantined mail received", { quarantine_id: id, outcome: outcome.kind });
    return { outcome: "received", kind: outcome.kind };
  }

  /** Runs the pipeline for one mail after any other run has settled. */
  #receive(raw: MailSource): Promise<ReceiveOutcome> {
    // A large mail in memory (a quarantined one retried) is read as a stream too.
    const inMemory = raw.kind === "bytes" &&
      raw.bytes.byteLength <= DEFAULT_DRAIN_LIMITS.inMemoryMailBytes;
    const run = this.#tail.then(() =>
      inMemory ? this.receiver.receive(raw.bytes) : this.receiver.receiveMail(raw)
    )
      .finally(() => this.#noteGarbage(mailSize(raw)));
    this.#tail = run.catch(() => {});
    return run;
  }

  /** Records the mail as a receive error (with the last failure's reason), forgets attempts. */
  giveUp(m: InboxMail, reason: string, head: Uint8Array): Promise<void> {
    const key = keyOf(m);
    const last = this.ctx.store.receiveAttempts.lastError(key);
    const why = last !== "" && !reason.includes(last) ? `${reason} (last error: ${last})` : reason;
    this.ctx.tx.run(() => {
      this.receiver.giveUp(head, m.size, why);
      this.ctx.store.receiveAttempts.clear(key);
    });
    this.#noteGarbage(head.byteLength);
    return Promise.resolve();
  }
}
