/**
 * Collects the receipts the gateway owes (read receipts after `markseen_msgs`, automatic delivery
 * receipts to peer gateways) and sends one MDN per peer and kind for everything collected within
 * a short window, so a burst of 200 messages costs a handful of receipt mails, not 200.
 */
import { logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import type { MailComposer } from "./mail_composer.ts";
import type { RenderedMail } from "./messages.ts";

const log = logger("receipts");

/** Most Message-IDs in one receipt mail. */
export const MAX_IDS_PER_RECEIPT = 100;

type Kind = "displayed" | "processed";

/** Batches receipts per contact and kind. */
export class ReceiptBatcher {
  readonly #pending = new Map<string, string[]>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly composer: MailComposer,
    private readonly queue: (mail: RenderedMail) => void,
    private readonly windowMs = 50,
  ) {}

  /** Owes `contactId` a receipt of `kind` for our copy of its message `rfc724Mid`. */
  add(contactId: number, rfc724Mid: string, kind: Kind): void {
    const key = `${contactId}:${kind}`;
    const ids = this.#pending.get(key) ?? [];
    ids.push(rfc724Mid);
    this.#pending.set(key, ids);
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flushing.then(() => this.flush());
    }, this.windowMs);
  }

  /** Sends everything collected now (also called on shutdown). */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batches = [...this.#pending];
    this.#pending.clear();
    for (const [key, ids] of batches) {
      const [contactId, kind] = key.split(":") as [string, Kind];
      const contact = this.store.contacts.get(Number(contactId));
      if (contact === undefined || contact.publicKey.length === 0) continue;
      for (let i = 0; i < ids.length; i += MAX_IDS_PER_RECEIPT) {
        try {
          const mail = await this.composer.renderReceipt(
            { addr: contact.addr, publicKey: contact.publicKey },
            ids.slice(i, i + MAX_IDS_PER_RECEIPT),
            kind,
          );
          this.queue(mail);
        } catch (err) {
          log.warn("could not render a receipt", { contactId, kind, error: String(err) });
        }
      }
    }
  }

  /** Stops the timer and sends what is pending. */
  async close(): Promise<void> {
    await this.#flushing;
    await this.flush();
  }
}
