/**
 * Our own reactions: stored as contact 1's reaction on the message and sent to the chat's
 * members as a reaction mail (RFC 9078, Delta Chat's form), in one transaction with its outbox
 * row, so the reaction shown and the reaction sent never disagree.
 */
import { ContactId } from "../constants.ts";
import { GatewayError, NotFoundError } from "../errors.ts";
import { reactionOf, type RenderControlFn } from "./chat_control.ts";
import { Chats } from "./chats.ts";
import { type CoreContext, nowSeconds } from "./context.ts";
import { Messages } from "./messages.ts";

/** Sends our reactions. */
export class Reactions {
  readonly #chats: Chats;
  readonly #messages: Messages;

  constructor(private readonly ctx: CoreContext) {
    this.#chats = new Chats(ctx);
    this.#messages = new Messages(ctx);
  }

  /**
   * Sets our reaction on message `msgId` to the first emoji of `reaction` ('' removes it) and
   * queues the reaction mail to the chat's members. `ReactionsChanged{chatId,msgId,contactId:1}`
   * after the commit. Unknown message → -1; a hidden or info message, or a chat we cannot send
   * to, → -1 with the reason.
   */
  async send(msgId: number, reaction: string, render: RenderControlFn): Promise<void> {
    const m = this.#messages.get(msgId);
    if (m === undefined) throw new NotFoundError(`message ${msgId} not found`);
    if (m.hidden || m.isInfo || m.rfc724Mid === "") {
      throw new GatewayError(`cannot react to message ${msgId}: it is not a chat message`);
    }
    const chat = this.#chats.require(m.chatId);
    const recipients = this.#messages.sendRecipients(chat);
    const emoji = reactionOf(reaction);
    const control = { kind: "reaction", target: m.rfc724Mid, reaction: emoji } as const;
    const mail = await render(control, recipients, chat.ephemeralTimer);
    this.ctx.tx.run((emit) => {
      this.ctx.store.reactions.set(m.id, ContactId.SELF, emoji, nowSeconds(this.ctx));
      this.#messages.enqueueMail(mail);
      emit({ kind: "ReactionsChanged", chatId: m.chatId, msgId: m.id, contactId: ContactId.SELF });
    });
  }
}
