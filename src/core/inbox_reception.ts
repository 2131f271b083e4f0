/**
 * What the IMAP drain hands INBOX mail to (it matches transport/inbox_drain.ts's `MailSink`):
 * the reception pipeline, an attempt count per mail in the store, the give-up record, one INFO
 * line per received mail (ids and sizes, never content), and the size of each mail it processed
 * told to the daemon's collector of burst garbage (src/memory/burst_gc.ts).
 */
import { logger } from "../log.ts";
import { type CoreContext, nowSeconds } from "./context.ts";
import type { ReceiveOutcome, Receiver } from "./receive.ts";

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
  readonly noteGarbage?: (bytes: number) => void;
}

/** The drain's sink over one account's pipeline and store. */
export class InboxReception {
  readonly #noteGarbage: (bytes: number) => void;

  constructor(
    private readonly ctx: CoreContext,
    private readonly receiver: Receiver,
    options: InboxReceptionOptions = {},
  ) {
    this.#noteGarbage = options.noteGarbage ?? (() => {});
  }

  begin(m: InboxMail): number {
    return this.ctx.store.receiveAttempts.begin(keyOf(m), nowSeconds(this.ctx));
  }

  failed(m: InboxMail, reason: string): void {
    this.ctx.store.receiveAttempts.failed(keyOf(m), reason);
  }

  /** Runs the pipeline (it commits or records the mail), then forgets the attempts. */
  async deliver(raw: Uint8Array, m: InboxMail): Promise<void> {
    const t0 = performance.now();
    let outcome: ReceiveOutcome;
    try {
      outcome = await this.receiver.receive(raw);
    } finally {
      this.#noteGarbage(raw.byteLength);
    }
    this.ctx.store.receiveAttempts.clear(keyOf(m));
    // Fetched mail in → committed and published to the event bus (SSE writes on the next tick).
    log.info("mail processed", {
      outcome: outcome.kind,
      ...outcomeFields(outcome),
      uid: m.uid,
      bytes: raw.length,
      pipeline_ms: Math.round((performance.now() - t0) * 100) / 100,
    });
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
