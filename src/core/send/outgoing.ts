/**
 * How the account makes the mails of ours: its send steps for chat messages (the one pipeline,
 * built once by the account core), control mails rendered by its composer, and read receipts
 * owed. Queuing is the domain's job (the outbox row is written with the message;
 * `DomainTx.mailQueued` wakes the sender after the commit).
 */
import type { MessageRecord } from "../../store/mod.ts";
import type { ContactRecord } from "../../store/mod.ts";
import type { ChatControl } from "../chats/control.ts";
import type { MailComposer } from "./mail_composer.ts";
import type { RenderedMail, SendSteps } from "../chats/messages.ts";
import type { ReceiptBatcher } from "./receipt_batcher.ts";

/** Renders what the account sends (`send_msg`, reactions, edits) and owes read receipts. */
export interface OutgoingRenderer {
  /** The steps every chat message of ours takes (`Messages.createOutgoing`). */
  readonly chat: SendSteps;
  /**
   * Owes read receipts for messages just marked seen whose sender asked for one. Called inside
   * the transaction that marked them (it only writes rows and wakes the sender), so the state
   * change and the receipts owed commit together or not at all.
   */
  oweReadReceipts(messages: readonly MessageRecord[]): void;
  /** Renders a reaction, edit or delete request of ours (`MailComposer.renderControl`). */
  renderControl(
    control: ChatControl,
    recipients: readonly ContactRecord[],
    ephemeralTimer: number,
  ): Promise<RenderedMail>;
}

/** The production `OutgoingRenderer`: the account's composer and receipt batcher. */
export class ComposerOutgoing implements OutgoingRenderer {
  constructor(
    private readonly composer: MailComposer,
    private readonly receipts: ReceiptBatcher,
    readonly chat: SendSteps,
  ) {}

  oweReadReceipts(messages: readonly MessageRecord[]): void {
    for (const m of messages) this.receipts.add(m.fromId, m.rfc724Mid, "displayed");
  }

  renderControl(
    control: ChatControl,
    recipients: readonly ContactRecord[],
    ephemeralTimer: number,
  ): Promise<RenderedMail> {
    return this.composer.renderControl(control, recipients, ephemeralTimer);
  }
}
