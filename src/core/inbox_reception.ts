/**
 * What the IMAP drain hands INBOX mail to (it matches transport/inbox_drain.ts's `MailSink`):
 * the reception pipeline, an attempt count per mail in the store, the give-up record, and one
 * INFO line per received mail (ids and sizes, never content).
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

/** The drain's sink over one account's pipeline and store. */
export class InboxReception {
  constructor(private readonly ctx: CoreContext, private readonly receiver: Receiver) {}

  begin(m: InboxMail): number {
    return this.ctx.store.receiveAttempts.begin(keyOf(m), nowSeconds(this.ctx));
  }

  failed(m: InboxMail, reason: string): void {
    this.ctx.store.receiveAttempts.failed(keyOf(m), reason);
  }

  /** Runs the pipeline (it commits or records the mail), then forgets the attempts. */
  async deliver(raw: Uint8Array, m: InboxMail): Promise<void> {
    const t0 = performance.now();
    const outcome = await this.receiver.receive(raw);
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
    return Promise.resolve();
  }
}
