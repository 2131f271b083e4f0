/**
 * Our mails that act on messages already sent, as Delta Chat sends them (`core:src/reaction.rs`,
 * `core:src/chat.rs` `send_edit_request`, `core:src/message.rs` `delete_msgs_ext`): a reaction,
 * an edit or a delete request for everyone. A reaction or an edit commits in one transaction
 * with its outbox row, so what is shown here and what is sent never disagree; delete requests
 * are queued before the messages are deleted here, so a crash in between can leave them here,
 * never deleted here but unannounced.
 */
import { ContactId } from "../../constants.ts";
import { GatewayError, NotFoundError } from "../../errors.ts";
import type { MessageRecord } from "../../store/mod.ts";
import { type ChatControl, reactionOf, type RenderControlFn } from "../chats/control.ts";
import { Chats } from "../chats/chats.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import { Messages, type RenderedMail } from "../chats/messages.ts";

/** Reacts to, edits and deletes-for-everyone messages, with the mail that tells the peers. */
export class OutgoingControls {
  readonly #chats: Chats;
  readonly #messages: Messages;

  constructor(private readonly ctx: CoreContext, private readonly render: RenderControlFn) {
    this.#chats = new Chats(ctx);
    this.#messages = new Messages(ctx);
  }

  /** The mail of `control` for the members of chat `chatId`, with its timer echoed. */
  #renderFor(chatId: number, control: ChatControl): Promise<RenderedMail> {
    const chat = this.#chats.require(chatId);
    return this.render(control, this.#messages.sendRecipients(chat), chat.ephemeralTimer);
  }

  /** A chat message (ours if `own`), or a -1 error saying why it cannot be acted on. */
  #target(id: number, what: string, own: boolean): MessageRecord {
    const m = this.#messages.get(id);
    if (m === undefined) throw new NotFoundError(`message ${id} not found`);
    if (m.hidden || m.isInfo || m.rfc724Mid === "") {
      throw new GatewayError(`cannot ${what} message ${id}: it is not a chat message`);
    }
    if (own && m.fromId !== ContactId.SELF) {
      throw new GatewayError(`cannot ${what} message ${id}: only our own sent messages can be`);
    }
    return m;
  }

  /**
   * Sets our reaction on message `msgId` to the first emoji of `reaction` ('' removes it) and
   * queues the reaction mail. `ReactionsChanged{chatId,msgId,contactId:1}` after the commit.
   */
  async react(msgId: number, reaction: string): Promise<void> {
    const m = this.#target(msgId, "react to", false);
    const emoji = reactionOf(reaction);
    const mail = await this.#renderFor(m.chatId, {
      kind: "reaction",
      target: m.rfc724Mid,
      reaction: emoji,
    });
    this.ctx.tx.run((emit) => {
      this.ctx.store.reactions.set(m.id, ContactId.SELF, emoji, nowSeconds(this.ctx));
      this.#messages.enqueueMail(mail);
      emit({ kind: "ReactionsChanged", chatId: m.chatId, msgId: m.id, contactId: ContactId.SELF });
    });
  }

  /**
   * Replaces the text of our message `id` here and for the chat's members (`MsgsChanged` after
   * the commit). Like Delta Chat: only a message that has text, only with a text not empty.
   */
  async edit(id: number, text: string): Promise<void> {
    const m = this.#target(id, "edit", true);
    if (m.text === "") throw new GatewayError(`cannot edit message ${id}: it has no text`);
    if (text.trim() === "") throw new GatewayError("the edited text cannot be empty");
    if (text === m.text) return;
    const mail = await this.#renderFor(m.chatId, { kind: "edit", target: m.rfc724Mid, text });
    this.ctx.tx.run((emit) => {
      this.ctx.store.msgs.editText(m.id, text);
      this.#messages.enqueueMail(mail);
      emit({ kind: "MsgsChanged", chatId: m.chatId, msgId: m.id });
    });
  }

  /**
   * Deletes our messages `ids` here and asks each chat's members to delete them too (one request
   * per chat). Any id that is not one of our sent messages → -1 and nothing happens.
   */
  async deleteForAll(ids: readonly number[]): Promise<void> {
    const byChat = new Map<number, MessageRecord[]>();
    for (const id of new Set(ids)) {
      const m = this.#target(id, "delete for everyone", true);
      byChat.set(m.chatId, [...(byChat.get(m.chatId) ?? []), m]);
    }
    const mails: RenderedMail[] = [];
    for (const [chatId, msgs] of byChat) {
      const targets = msgs.map((m) => m.rfc724Mid);
      mails.push(await this.#renderFor(chatId, { kind: "delete", targets }));
    }
    this.ctx.tx.run(() => {
      for (const mail of mails) this.#messages.enqueueMail(mail);
    });
    await this.#messages.delete([...byChat.values()].flat().map((m) => m.id));
  }
}
