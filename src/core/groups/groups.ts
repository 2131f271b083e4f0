/**
 * Groups (chat type 120) as the account changes them: create, add and remove members, leave,
 * rename and set the avatar. A change is applied here first, then announced to every member by
 * a Delta Chat system message (stored here as an info message); while a new group was never
 * announced, changes stay local and its first message carries them all, as in Delta Chat.
 */
import { ChatType, ContactId, MessageState } from "../../constants.ts";
import { newToken } from "../../crypto/random.ts";
import { GatewayError, NotFoundError } from "../../errors.ts";
import { SystemMessage } from "../../protocol.ts";
import type { ChatRecord } from "../../store/mod.ts";
import { removeBlob, writeBlob } from "../blobs.ts";
import { Chats } from "../chats/chats.ts";
import { Contacts } from "../contacts/contacts.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import { type GroupChange, groupChangeBody } from "./mail.ts";
import { GroupMembers } from "./members.ts";
import { Messages } from "../chats/messages.ts";
import type { SendSteps } from "../send/rendered_mail.ts";

/** Longest group name kept (characters); longer names are cut. */
export const MAX_GROUP_NAME = 256;

/** A group name as stored: one line, trimmed, not empty. */
export function cleanGroupName(name: string): string {
  const clean = [...name.replace(/[\r\n\t]+/g, " ").trim()].slice(0, MAX_GROUP_NAME).join("");
  if (clean === "") throw new GatewayError("a group name must not be empty");
  return clean;
}

/** Group changes made by this account. */
export class Groups {
  readonly #chats: Chats;
  readonly #contacts: Contacts;
  readonly #members: GroupMembers;

  constructor(private readonly ctx: CoreContext, private readonly send: SendSteps) {
    this.#chats = new Chats(ctx);
    this.#contacts = new Contacts(ctx);
    this.#members = new GroupMembers(ctx);
  }

  /** A group chat, or -1 saying why not (unknown chat, not a group). */
  requireGroup(chatId: number): ChatRecord {
    const chat = this.#chats.require(chatId);
    if (chat.type !== ChatType.GROUP) {
      throw new GatewayError(`chat ${chatId} is not a group (chat type ${chat.type})`);
    }
    return chat;
  }

  #requireMember(chat: ChatRecord, doing: string): void {
    if (!this.#members.isMember(chat.id, ContactId.SELF)) {
      throw new GatewayError(`cannot ${doing} in group chat ${chat.id}: you are not a member`);
    }
  }

  /**
   * Creates a group named `name` with self as its only member, not announced yet (Delta Chat's
   * unpromoted group). Emits `MsgsChanged{0,0}` and `ChatModified`. Returns the chat id.
   */
  create(name: string): number {
    const clean = cleanGroupName(name);
    const now = nowSeconds(this.ctx);
    return this.ctx.tx.run((emit) => {
      const chatId = this.ctx.store.chats.insert({
        type: ChatType.GROUP,
        name: clean,
        grpid: newToken(),
        createdAt: now,
        nameTimestamp: now,
        unpromoted: true,
      });
      this.#members.add(chatId, ContactId.SELF, now);
      emit({ kind: "MsgsChanged", chatId: 0, msgId: 0 });
      emit({ kind: "ChatModified", chatId });
      return chatId;
    });
  }

  /**
   * Adds a contact with a key (others → -1 saying why) and tells every member, the new one
   * included, with a member-added message gossiping every member's key. `secureJoin`: the add
   * ends the contact's SecureJoin (`Secure-Join: vg-member-added`; always announced).
   */
  async addMember(chatId: number, contactId: number, secureJoin = false): Promise<void> {
    const chat = this.requireGroup(chatId);
    this.#requireMember(chat, "add members");
    if (contactId === ContactId.SELF) throw new GatewayError("you are already a member");
    const c = this.#contacts.get(contactId);
    if (c === undefined) throw new NotFoundError(`contact ${contactId} not found`);
    if (c.fingerprint === "" || c.publicKey.length === 0) {
      throw new GatewayError(
        `cannot add contact ${contactId} (${c.addr}) to group chat ${chatId}: no encryption key ` +
          `is known for it; set up the contact with an invite link first`,
      );
    }
    if (this.#members.isMember(chatId, contactId) && !secureJoin) return;
    this.ctx.tx.run((emit) => {
      this.#members.add(chatId, contactId, nowSeconds(this.ctx));
      emit({ kind: "ChatModified", chatId });
    });
    const name = this.#contacts.details(contactId)!.displayName;
    await this.#announce(
      chat,
      {
        kind: "member-added",
        addr: c.addr,
        fingerprint: c.fingerprint,
        secureJoin,
      },
      `You added member ${name}.`,
      SystemMessage.MEMBER_ADDED,
      secureJoin,
    );
  }

  /**
   * Removes a member (1 = self: leaves the group) and tells the remaining members and the removed
   * one. A contact that is not a member → -1.
   */
  async removeMember(chatId: number, contactId: number): Promise<void> {
    const chat = this.requireGroup(chatId);
    this.#requireMember(chat, "remove members");
    if (!this.#members.isMember(chatId, contactId)) {
      throw new GatewayError(`contact ${contactId} is not a member of group chat ${chatId}`);
    }
    const c = this.#contacts.details(contactId)!;
    this.ctx.tx.run((emit) => {
      this.#members.remove(chatId, contactId, nowSeconds(this.ctx));
      emit({ kind: "ChatModified", chatId });
    });
    const self = contactId === ContactId.SELF;
    await this.#announce(
      chat,
      { kind: "member-removed", addr: c.addr, fingerprint: c.fingerprint },
      self ? "You left the group." : `You removed member ${c.displayName}.`,
      SystemMessage.MEMBER_REMOVED,
    );
  }

  /** Leaves a group: `removeMember(chatId, 1)`. */
  leave(chatId: number): Promise<void> {
    return this.removeMember(chatId, ContactId.SELF);
  }

  /** Renames the group for every member (a newer name timestamp wins everywhere). */
  async rename(chatId: number, name: string): Promise<void> {
    const chat = this.requireGroup(chatId);
    this.#requireMember(chat, "rename the group");
    const clean = cleanGroupName(name);
    if (clean === chat.name) return;
    this.ctx.tx.run((emit) => {
      // Strictly newer than the current name's time, so every member takes it.
      const at = Math.max(nowSeconds(this.ctx), chat.nameTimestamp + 1);
      this.ctx.store.chats.setGroupName(chatId, clean, at);
      emit({ kind: "ChatModified", chatId });
    });
    await this.#announce(
      chat,
      { kind: "name-changed", oldName: chat.name },
      `You changed the group name from "${chat.name}" to "${clean}".`,
      SystemMessage.GROUP_NAME_CHANGED,
    );
  }

  /** Sets (`image`) or removes (null) the group avatar for every member. */
  async setAvatar(
    chatId: number,
    image: { bytes: Uint8Array; name: string; mime: string } | null,
  ): Promise<void> {
    const chat = this.requireGroup(chatId);
    this.#requireMember(chat, "change the group image");
    const blob = image && await writeBlob(this.ctx.blobDir, image.bytes, image.name, image.mime);
    this.ctx.tx.run((emit) => {
      this.ctx.store.chats.setAvatar(chatId, blob?.blob ?? "", nowSeconds(this.ctx));
      emit({ kind: "ChatModified", chatId });
    });
    if (chat.avatar !== "" && chat.avatar !== blob?.blob) {
      if (this.ctx.store.msgs.fileRefs(chat.avatar) === 0) {
        await removeBlob(this.ctx.blobDir, chat.avatar);
      }
    }
    await this.#announce(
      chat,
      { kind: "avatar-changed", image: image && { bytes: image.bytes, mime: image.mime } },
      image ? "You changed the group image." : "You removed the group image.",
      SystemMessage.GROUP_IMAGE_CHANGED,
    );
  }

  /**
   * Stores the info message and sends the system message to the members, or, for a group never
   * announced, only stores it (the first message will carry the change).
   */
  async #announce(
    chat: ChatRecord,
    change: GroupChange,
    text: string,
    systemType: SystemMessage,
    always = false,
  ): Promise<void> {
    const now = this.#chats.require(chat.id);
    if (now.unpromoted && !always) {
      this.#localInfo(chat.id, text, systemType);
      return;
    }
    await new Messages(this.ctx).createOutgoing({
      chatId: chat.id,
      text: groupChangeBody(change, this.#contacts.self().addr),
      groupChange: change,
      info: { text, systemType },
    }, this.send);
  }

  #localInfo(chatId: number, text: string, systemType: SystemMessage): void {
    const now = nowSeconds(this.ctx);
    this.ctx.tx.run((emit) => {
      const msgId = this.ctx.store.msgs.insert({
        chatId,
        fromId: ContactId.INFO,
        text,
        timestamp: now,
        state: MessageState.SEEN,
        timestampSent: now,
        timestampRcvd: now,
        isInfo: true,
        systemType,
      });
      emit({ kind: "MsgsChanged", chatId, msgId });
    });
  }
}
