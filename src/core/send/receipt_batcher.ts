/**
 * Sends the receipts the gateway owes (read receipts after `markseen_msgs`, automatic delivery
 * receipts to peer gateways). Each owed receipt is first written to the store (inside the caller's
 * transaction when there is one), then all owed within a short window go out as one MDN per peer
 * and kind; the rows are removed in the same transaction that queues the receipt mail. So a burst
 * of 200 messages costs a handful of receipt mails, and a crash at any moment loses none.
 */
import { logger } from "../../log.ts";
import type { OwedReceipt, ReceiptKind } from "../../store/mod.ts";
import type { CoreContext } from "../context.ts";
import type { MailComposer } from "./mail_composer.ts";
import type { RenderedMail } from "../chats/messages.ts";

const log = logger("receipts");

/** Most Message-IDs in one receipt mail. */
export const MAX_IDS_PER_RECEIPT = 100;

/** Batches owed receipts per contact and kind. */
export class ReceiptBatcher {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly ctx: CoreContext,
    private readonly composer: MailComposer,
    private readonly queue: (mail: RenderedMail) => void,
    private readonly windowMs = 50,
  ) {
    if (ctx.store.owedReceipts.count() > 0) this.#schedule(); // owed before a restart
  }

  /** Owes `contactId` a receipt of `kind` for its message `rfc724Mid` (stored at once). */
  add(contactId: number, rfc724Mid: string, kind: ReceiptKind): void {
    this.ctx.store.owedReceipts.add(contactId, rfc724Mid, kind);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flushing.then(() => this.flush());
    }, this.windowMs);
  }

  /** Renders and queues everything owed now. */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const groups = new Map<string, OwedReceipt[]>();
    for (const r of this.ctx.store.owedReceipts.list()) {
      const key = `${r.contactId}:${r.kind}`;
      const group = groups.get(key);
      if (group) group.push(r);
      else groups.set(key, [r]);
    }
    for (const rows of groups.values()) {
      for (let i = 0; i < rows.length; i += MAX_IDS_PER_RECEIPT) {
        await this.#send(rows.slice(i, i + MAX_IDS_PER_RECEIPT));
      }
    }
  }

  async #send(rows: OwedReceipt[]): Promise<void> {
    const { contactId, kind } = rows[0];
    const ids = rows.map((r) => r.id);
    const contact = this.ctx.store.contacts.get(contactId);
    if (contact === undefined || contact.publicKey.length === 0) {
      this.ctx.store.owedReceipts.remove(ids); // the peer or its key is gone: nothing to send to
      return;
    }
    try {
      const mail = await this.composer.renderReceipt(
        { addr: contact.addr, publicKey: contact.publicKey },
        rows.map((r) => r.rfc724Mid),
        kind,
      );
      this.ctx.tx.run(() => {
        this.queue(mail);
        this.ctx.store.owedReceipts.remove(ids);
      });
    } catch (err) {
      log.warn("could not send a receipt; it stays owed", { contactId, kind, error: String(err) });
    }
  }

  /** Stops the timer and queues what is owed (the rest is sent after the next start). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#flushing;
    await this.flush();
  }
}
