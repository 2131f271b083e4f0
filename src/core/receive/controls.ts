/**
 * Applies what a peer's control mail asks for (`chat_control.ts`) to the messages it names,
 * with Delta Chat's rules (`core:src/receive_imf.rs` `handle_edit_delete`, `core:src/reaction.rs`):
 * only the sender of a message may edit or delete it; a reaction needs the reacting contact to
 * be in the message's chat. Events after the commit: `MsgsChanged` (edit), `MsgDeleted`
 * (delete), `ReactionsChanged` and, for a reaction to one of our messages, `IncomingReaction`.
 */
import { ContactId } from "../../constants.ts";
import type { ChatControl } from "../chats/control.ts";
import { Chats } from "../chats/chats.ts";
import type { CoreContext } from "../context.ts";
import { Messages } from "../chats/messages.ts";

/** Applies control mails from peers. */
export class ChatControls {
  readonly #chats: Chats;

  constructor(private readonly ctx: CoreContext) {
    this.#chats = new Chats(ctx);
  }

  /**
   * Applies `control`, sent by `contactId` at `sentAt` (Unix seconds); returns how many messages
   * changed. Names of messages that are unknown or not the contact's to change are skipped.
   */
  async apply(control: ChatControl, contactId: number, sentAt: number): Promise<number> {
    const { msgs } = this.ctx.store;
    switch (control.kind) {
      case "reaction": {
        const m = msgs.byRfc724Mid(control.target);
        if (m === undefined || m.hidden) return 0;
        if (!this.#chats.contactIds(m.chatId).includes(contactId)) return 0;
        const at = sentAt || Math.floor(this.ctx.now() / 1000);
        return this.ctx.tx.run((emit) => {
          if (!this.ctx.store.reactions.set(m.id, contactId, control.reaction, at)) return 0;
          emit({ kind: "ReactionsChanged", chatId: m.chatId, msgId: m.id, contactId });
          if (m.fromId === ContactId.SELF && control.reaction !== "") {
            const reaction = control.reaction;
            emit({ kind: "IncomingReaction", chatId: m.chatId, contactId, msgId: m.id, reaction });
          }
          return 1;
        });
      }
      case "edit": {
        const m = msgs.byRfc724Mid(control.target);
        if (m === undefined || m.fromId !== contactId || m.isInfo) return 0;
        if (control.text.trim() === "" || (m.text === control.text && m.edited)) return 0;
        return this.ctx.tx.run((emit) => {
          msgs.editText(m.id, control.text);
          emit({ kind: "MsgsChanged", chatId: m.chatId, msgId: m.id });
          return 1;
        });
      }
      case "delete": {
        const own = control.targets.map((id) => msgs.byRfc724Mid(id))
          .filter((m) => m !== undefined && m.fromId === contactId).map((m) => m!.id);
        if (own.length > 0) await new Messages(this.ctx).delete(own);
        return own.length;
      }
    }
  }
}
