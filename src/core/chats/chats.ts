/**
 * Chats: get-or-create 1:1 chats, the chat list (newest activity first, Delta Chat's flags),
 * per-chat summaries, members and send recipients.
 */
import { ChatType, ContactId } from "../../constants.ts";
import { GatewayError, NotFoundError } from "../../errors.ts";
import type { ChatRecord, ContactRecord, MessageRecord } from "../../store/mod.ts";
import { type ContactDetails, Contacts, displayNameOf } from "../contacts/contacts.ts";
import { blobPath } from "../blobs.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import { PAST_MEMBER_SECONDS } from "../groups/mail.ts";

/** `get_chatlist_entries` flags (Delta Chat's `DC_GCL_*`). */
export const ChatListFlag = {
  ARCHIVED_ONLY: 0x01,
  /** No special entries (the archive link). */
  NO_SPECIALS: 0x02,
  ADD_ALLDONE_HINT: 0x04,
  FOR_FORWARDING: 0x08,
} as const;

/** Special chat ids (Delta Chat numbering): 6 stands for "archived chats" in the list. */
export const SpecialChatId = { ARCHIVED_LINK: 6, LAST_SPECIAL: 9 } as const;

/** Chat-list query. */
export interface ChatListQuery {
  readonly flags?: number | null;
  /** Case-insensitive substring of the chat name. */
  readonly query?: string | null;
  /** Only chats with this member (for 1:1 chats: with this peer). */
  readonly contactId?: number | null;
}

/** Everything a chat-list entry or chat view shows. */
export interface ChatSummary {
  readonly chat: ChatRecord;
  /** Stored name, or the peer's display name for a 1:1 chat. */
  readonly name: string;
  /** Fresh (state 1) visible messages. */
  readonly freshCount: number;
  /** The newest visible message, if any. */
  readonly lastMessage?: MessageRecord;
  /** Its sender. */
  readonly lastSender?: ContactDetails;
  /** Unix ms of the newest message, else of the chat's creation. */
  readonly lastUpdated: number;
  /** The peer of a 1:1 chat; null for groups. */
  readonly dmContactId: number | null;
}

/** The result of `getOrCreate1to1`. */
export interface ChatRef {
  readonly chatId: number;
  readonly created: boolean;
}

/** Chat lookups and changes. */
export class Chats {
  readonly #contacts: Contacts;

  constructor(private readonly ctx: CoreContext) {
    this.#contacts = new Contacts(ctx);
  }

  /** A chat (id ≥ 10), or undefined. */
  get(id: number): ChatRecord | undefined {
    return id > SpecialChatId.LAST_SPECIAL ? this.ctx.store.chats.get(id) : undefined;
  }

  /** A chat, or NotFoundError (-1) `chat N not found`. */
  require(id: number): ChatRecord {
    const chat = this.get(id);
    if (chat === undefined) throw new NotFoundError(`chat ${id} not found`);
    return chat;
  }

  /** The name shown: the stored name, or for a 1:1 chat the peer's display name. */
  nameOf(chat: ChatRecord): string {
    if (chat.type !== ChatType.SINGLE || chat.name !== "") return chat.name;
    const peer = this.#contacts.get(chat.contactId);
    return peer === undefined ? "" : displayNameOf(peer);
  }

  /**
   * The 1:1 chat with a contact, created when missing. Unknown or special contacts → -1
   * `contact N not found`; self (1) → -1 (no "saved messages" chat in the gateway). Creation
   * emits `MsgsChanged{chatId:0,msgId:0}` (Delta Chat's "reload everything") and
   * `ChatModified{chatId}`; getting an existing chat emits nothing.
   */
  getOrCreate1to1(contactId: number): ChatRef {
    if (contactId === ContactId.SELF) {
      throw new GatewayError("cannot create a chat with contact 1 (self): not supported");
    }
    if (this.#contacts.get(contactId) === undefined) {
      throw new NotFoundError(`contact ${contactId} not found`);
    }
    return this.ctx.tx.run((emit) => {
      const store = this.ctx.store.chats;
      const known = store.singleByContact(contactId);
      if (known !== undefined) return { chatId: known.id, created: false };
      const chatId = store.insert({
        type: ChatType.SINGLE,
        contactId,
        createdAt: nowSeconds(this.ctx),
      });
      store.addMember(chatId, contactId);
      emit({ kind: "MsgsChanged", chatId: 0, msgId: 0 });
      emit({ kind: "ChatModified", chatId });
      return { chatId, created: true };
    });
  }

  /**
   * Chat ids for the chat list, newest activity first. Default: unarchived chats, then the
   * archive link (6) when some chat is archived and neither `NO_SPECIALS` nor a query/contact
   * filter is given; `ARCHIVED_ONLY` (0x01): archived chats only.
   */
  listEntries(q: ChatListQuery = {}): number[] {
    const flags = q.flags ?? 0;
    const archived = (flags & ChatListFlag.ARCHIVED_ONLY) !== 0;
    const needle = (q.query ?? "").trim().toLowerCase();
    const contactId = q.contactId ?? undefined;
    const ids = this.ctx.store.chats.listByActivity({ archived, contactId })
      .filter((c) => needle === "" || this.nameOf(c).toLowerCase().includes(needle))
      .map((c) => c.id);
    const plain = needle === "" && contactId === undefined;
    const specials = !archived && plain && (flags & ChatListFlag.NO_SPECIALS) === 0;
    if (specials && this.ctx.store.chats.countArchived() > 0) ids.push(SpecialChatId.ARCHIVED_LINK);
    return ids;
  }

  /** What the chat list shows for a chat, or undefined for an unknown id. */
  summary(chatId: number): ChatSummary | undefined {
    const chat = this.get(chatId);
    if (chat === undefined) return undefined;
    const { chats, msgs } = this.ctx.store;
    const lastMessage = msgs.lastOfChat(chat.id);
    const lastSender = lastMessage && this.#contacts.details(lastMessage.fromId);
    return {
      chat,
      name: this.nameOf(chat),
      freshCount: chats.freshCount(chat.id),
      ...(lastMessage === undefined ? {} : { lastMessage }),
      ...(lastSender === undefined ? {} : { lastSender }),
      lastUpdated: (lastMessage?.timestamp ?? chat.createdAt) * 1000,
      dmContactId: chat.type === ChatType.SINGLE ? chat.contactId : null,
    };
  }

  /** Fresh messages over all archived chats (the archive link's counter). */
  archivedFreshCount(): number {
    return this.ctx.store.chats.archivedFreshCount();
  }

  /**
   * Member ids as the contract's `get_chat_contacts` returns them (docs/design-decisions.md §2): a
   * 1:1 chat gives `[1, peer]` (Delta Chat gives `[peer]`); a group gives its stored members (self
   * included while a member).
   */
  contactIds(chatId: number): number[] {
    const chat = this.require(chatId);
    const members = this.ctx.store.chats.memberIds(chat.id);
    if (chat.type !== ChatType.SINGLE) return members;
    return [ContactId.SELF, ...members.filter((id) => id !== ContactId.SELF)];
  }

  /** Member ids as Delta Chat stores them (1:1: only the peer), for `FullChat.contactIds`. */
  memberIds(chatId: number): number[] {
    return this.ctx.store.chats.memberIds(this.require(chatId).id);
  }

  /** Absolute path of a group's avatar, or null without one. */
  avatarPath(chat: ChatRecord): string | null {
    return chat.avatar === "" ? null : blobPath(this.ctx.blobDir, chat.avatar);
  }

  /** Contacts removed from a group within the last 60 days (`get_past_chat_contacts`). */
  pastMemberIds(chatId: number): number[] {
    const chat = this.require(chatId);
    if (chat.type === ChatType.SINGLE) return [];
    return this.ctx.store.chats.pastMemberIds(chat.id, nowSeconds(this.ctx) - PAST_MEMBER_SECONDS);
  }

  /**
   * True when self takes part: always for 1:1 chats, for groups and subscribed channels while 1
   * is a member; never for our own channels (Delta Chat lists only subscribers there).
   */
  selfInChat(chat: ChatRecord): boolean {
    return chat.type === ChatType.SINGLE ||
      this.ctx.store.chats.memberIds(chat.id).includes(ContactId.SELF);
  }

  /** True when we may send to the chat: a 1:1 chat, a group we are in, a channel we own. */
  canSend(chat: ChatRecord): boolean {
    if (chat.type === ChatType.BROADCAST) return chat.ownerId === ContactId.SELF;
    return this.selfInChat(chat);
  }

  /**
   * Follows the disappearing-messages timer a chat's peer sent with a message (seconds, 0 off):
   * stored, so our mails to the chat carry it too, and `ChatEphemeralTimerModified` when it
   * changed. Call it inside the transaction that stores the message.
   */
  applyPeerTimer(chatId: number, seconds: number): void {
    const chat = this.ctx.store.chats.get(chatId);
    if (chat === undefined || chat.ephemeralTimer === seconds) return;
    this.ctx.tx.run((emit) => {
      this.ctx.store.chats.setEphemeralTimer(chatId, seconds);
      emit({ kind: "ChatEphemeralTimerModified", chatId, timer: seconds });
    });
  }

  /** The contacts a message to this chat goes to (every member but self). */
  recipients(chat: ChatRecord): ContactRecord[] {
    return this.ctx.store.chats.memberIds(chat.id)
      .filter((id) => id !== ContactId.SELF)
      .map((id) => this.#contacts.get(id))
      .filter((c): c is ContactRecord => c !== undefined);
  }
}
