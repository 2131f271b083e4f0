/**
 * Changing our own sent messages for everyone, as Delta Chat does (`core:src/chat.rs`
 * `send_edit_request`, `core:src/message.rs` `delete_msgs_ext`). An edit and its mail commit in
 * one transaction; delete requests are queued before the messages are deleted here, so a crash
 * in between can leave them here, never deleted here but unannounced.
 */
import { ContactId } from "../constants.ts";
import { GatewayError, NotFoundError } from "../errors.ts";
import type { MessageRecord } from "../store/mod.ts";
import type { RenderControlFn } from "./chat_control.ts";
import { Chats } from "./chats.ts";
import type { CoreContext } from "./context.ts";
import { Messages, type RenderedMail } from "./messages.ts";

/** Edits and deletes our messages for everyone. */
export class MessageEdits {
  readonly #chats: Chats;
  readonly #messages: Messages;

  constructor(private readonly ctx: CoreContext) {
    this.#chats = new Chats(ctx);
    this.#messages = new Messages(ctx);
  }

  /** One of our sent chat messages, or a -1 error saying why it cannot be changed. */
  #own(id: number, what: string): MessageRecord {
    const m = this.#messages.get(id);
    if (m === undefined) throw new NotFoundError(`message ${id} not found`);
    if (m.fromId !== ContactId.SELF || m.hidden || m.isInfo || m.rfc724Mid === "") {
      throw new GatewayError(`cannot ${what} message ${id}: only our own sent messages can be`);
    }
    return m;
  }

  /**
   * Replaces the text of our message `id` and asks the chat's members to do the same
   * (`MsgsChanged` after the commit). Like Delta Chat: only a message that has text, and only
   * with a text that is not empty.
   */
  async sendEdit(id: number, text: string, render: RenderControlFn): Promise<void> {
    const m = this.#own(id, "edit");
    if (m.text === "") throw new GatewayError(`cannot edit message ${id}: it has no text`);
    if (text.trim() === "") throw new GatewayError("the edited text cannot be empty");
    if (text === m.text) return;
    const chat = this.#chats.require(m.chatId);
    const recipients = this.#messages.sendRecipients(chat);
    const control = { kind: "edit", target: m.rfc724Mid, text } as const;
    const mail = await render(control, recipients, chat.ephemeralTimer);
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
  async deleteForAll(ids: readonly number[], render: RenderControlFn): Promise<void> {
    const byChat = new Map<number, MessageRecord[]>();
    for (const id of new Set(ids)) {
      const m = this.#own(id, "delete for everyone");
      byChat.set(m.chatId, [...(byChat.get(m.chatId) ?? []), m]);
    }
    const mails: RenderedMail[] = [];
    for (const [chatId, msgs] of byChat) {
      const chat = this.#chats.require(chatId);
      const recipients = this.#messages.sendRecipients(chat);
      const control = { kind: "delete", targets: msgs.map((m) => m.rfc724Mid) } as const;
      mails.push(await render(control, recipients, chat.ephemeralTimer));
    }
    this.ctx.tx.run(() => {
      for (const mail of mails) this.#messages.enqueueMail(mail);
    });
    await this.#messages.delete([...byChat.values()].flat().map((m) => m.id));
  }
}
