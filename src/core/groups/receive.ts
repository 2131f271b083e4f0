/**
 * Applying a received group message (docs/protocol-notes.md §7.4): an unknown group is created from
 * it when it names itself and removes nobody; in a known group only current members change
 * things (a receiver that is no member itself accepts changes from anyone). Membership follows
 * `Chat-Group-Member-Timestamps` merged entry by entry (no change at all when the count is
 * wrong), or the explicit added/removed headers of senders without timestamps; the name and the
 * avatar follow the newer timestamp. System messages become info messages with Delta Chat's
 * texts. Header parsing and the avatar's blob are in group_headers.ts.
 */
import { ChatType, ContactId } from "../../constants.ts";
import { logger } from "../../log.ts";
import { Header, SystemMessage } from "../../protocol.ts";
import type { ChatRecord } from "../../store/mod.ts";
import { Contacts } from "../contacts/contacts.ts";
import { type CoreContext, type Emit, nowSeconds } from "../context.ts";
import { type GroupHeaders, type GroupPrep, parseGroupHeaders } from "./headers.ts";
import { GroupMembers } from "./members.ts";
import type { HeaderMailbox, ReadMail } from "../receive/mail_reader.ts";
import { decodeEncodedWords } from "../../mime/parser.ts";

const log = logger("receive");

/** Where the message goes and what it says when it is a system message. */
export type ChatTarget =
  | {
    readonly kind: "chat";
    readonly chatId: number;
    /** Text and kind of the info message a system message becomes. */
    readonly info?: { readonly text: string; readonly systemType: string };
  }
  | { readonly kind: "discard"; readonly reason: string };

/** Applies group messages to the store (call inside the reception transaction). */
export class GroupReceiver {
  readonly #contacts: Contacts;
  readonly #members: GroupMembers;

  constructor(private readonly ctx: CoreContext) {
    this.#contacts = new Contacts(ctx);
    this.#members = new GroupMembers(ctx);
  }

  /**
   * The group chat `mail` (with group id `grpid`, from contact `senderId`) belongs to, after
   * applying what it changes; or discard with the reason (Delta Chat trashes these).
   */
  apply(
    mail: ReadMail,
    grpid: string,
    name: string | undefined,
    senderId: number,
    prep: GroupPrep,
    systemType: string | undefined,
  ): ChatTarget {
    return this.ctx.tx.run((emit) => {
      const now = nowSeconds(this.ctx);
      const h = parseGroupHeaders(mail, now);
      const chat = this.ctx.store.chats.byGrpid(grpid);
      if (chat === undefined) {
        if (name === undefined) return discard("message of an unknown group without its name");
        if (h.removed !== undefined) return discard("member removal in a group we do not know");
        const chatId = this.#create(mail, grpid, name, senderId, h, emit);
        return inChat(chatId, this.#info(mail, h, senderId, systemType, name));
      }
      if (chat.type !== ChatType.GROUP) return discard(`chat ${chat.id} is not a group`);
      const selfIn = this.#members.isMember(chat.id, ContactId.SELF);
      const fromIn = !selfIn || this.#members.isMember(chat.id, senderId);
      if (!fromIn) {
        if (systemType !== undefined && isGroupChange(systemType)) {
          return discard("group change from a contact that is not a member");
        }
        return { kind: "chat", chatId: chat.id };
      }
      const changed = this.#applyMembers(chat, mail, h, senderId) |
        this.#applyName(chat, mail, h, name) | this.#applyAvatar(chat, mail, prep);
      if (changed) emit({ kind: "ChatModified", chatId: chat.id });
      return inChat(chat.id, this.#info(mail, h, senderId, systemType, chat.name));
    });
  }

  /** The contact for a listed member: by `Fpr[i]`, else self by address, else by address. */
  #contactFor(m: HeaderMailbox, fpr: string | undefined): number | undefined {
    const self = this.#contacts.self();
    if (m.addr === self.addr || (fpr !== undefined && fpr === self.fingerprint)) {
      return ContactId.SELF;
    }
    if (fpr !== undefined && /^[0-9A-F]{40}([0-9A-F]{24})?$/.test(fpr)) {
      const known = this.ctx.store.contacts.byFingerprint(fpr);
      if (known !== undefined) return known.id;
      // A key-contact without its key yet (as Delta Chat): it gets the key from gossip later.
      const id = this.ctx.store.contacts.insert({
        addr: m.addr,
        authName: m.name,
        fingerprint: fpr,
      });
      this.ctx.tx.emit({ kind: "ContactsChanged", contactId: id });
      return id;
    }
    return this.#contacts.lookupIdByAddr(m.addr);
  }

  /** Listed members with their timestamps, or undefined when the lists do not line up. */
  #listed(h: GroupHeaders): { to: [number, number][]; past: [number, number][] } | undefined {
    const n = h.to.length + h.past.length;
    if (h.timestamps === undefined || h.timestamps.length !== n) return undefined;
    const fprs = h.fprs !== undefined && h.fprs.length === n ? h.fprs : undefined;
    const pick = (list: HeaderMailbox[], offset: number) =>
      list.map((m, i) => [this.#contactFor(m, fprs?.[offset + i]), h.timestamps![offset + i]])
        .filter((e): e is [number, number] => e[0] !== undefined);
    return { to: pick(h.to, 0), past: pick(h.past, h.to.length) };
  }

  #create(
    mail: ReadMail,
    grpid: string,
    name: string,
    senderId: number,
    h: GroupHeaders,
    emit: Emit,
  ): number {
    const now = nowSeconds(this.ctx);
    const chatId = this.ctx.store.chats.insert({
      type: ChatType.GROUP,
      name,
      grpid,
      createdAt: now,
      nameTimestamp: h.nameTimestamp ?? mail.sentAt,
    });
    const listed = this.#listed(h);
    const sent = Math.min(mail.sentAt || now, now);
    if (listed !== undefined) {
      for (const [id, ts] of listed.to) this.#members.add(chatId, id, ts);
      for (const [id, ts] of listed.past) {
        this.ctx.store.chats.setMembership(chatId, {
          contactId: id,
          addTimestamp: 0,
          removeTimestamp: ts,
        });
      }
      if (!this.#members.isMember(chatId, senderId)) this.#members.add(chatId, senderId, sent);
    } else {
      for (const m of h.to) {
        const id = this.#contactFor(m, undefined);
        if (id !== undefined) this.#members.add(chatId, id, 0);
      }
      this.#members.add(chatId, senderId, 0);
      this.#members.add(chatId, ContactId.SELF, 0);
    }
    emit({ kind: "MsgsChanged", chatId: 0, msgId: 0 });
    emit({ kind: "ChatModified", chatId });
    log.info("group created from a received message", { chatId });
    return chatId;
  }

  /** Delta Chat's merge (receive_imf.rs): newer add/remove times win, entry by entry. */
  #applyMembers(chat: ChatRecord, mail: ReadMail, h: GroupHeaders, senderId: number): number {
    const before = this.ctx.store.chats.memberIds(chat.id).join(",");
    const selfBefore = this.#members.isMember(chat.id, ContactId.SELF);
    const listed = this.#listed(h);
    if (listed !== undefined) {
      for (const [id, ts] of listed.to) {
        if (id === senderId) continue;
        const row = this.ctx.store.chats.membership(chat.id, id);
        if (row === undefined) {
          this.ctx.store.chats.setMembership(chat.id, {
            contactId: id,
            addTimestamp: ts,
            removeTimestamp: 0,
          });
        } else if (ts > row.addTimestamp && ts >= row.removeTimestamp) {
          this.ctx.store.chats.setMembership(chat.id, { ...row, addTimestamp: ts });
        }
      }
      for (const [id, ts] of listed.past) {
        const row = this.ctx.store.chats.membership(chat.id, id);
        if (row === undefined) {
          this.ctx.store.chats.setMembership(chat.id, {
            contactId: id,
            addTimestamp: 0,
            removeTimestamp: ts,
          });
        } else if (ts > row.removeTimestamp && ts > row.addTimestamp) {
          this.ctx.store.chats.setMembership(chat.id, { ...row, removeTimestamp: ts });
        }
      }
    } else if (h.timestamps === undefined) {
      const at = Math.min(mail.sentAt || nowSeconds(this.ctx), nowSeconds(this.ctx));
      if (h.added !== undefined) {
        const id = this.#contactFor({ addr: h.added, name: "" }, undefined);
        if (id !== undefined) this.#members.add(chat.id, id, at);
      }
      if (h.removed !== undefined) {
        const id = this.#removedId(chat, h);
        if (id !== undefined) this.#members.remove(chat.id, id, at);
      }
    } else {
      log.warn("group member lists do not line up; membership unchanged", {
        chatId: chat.id,
        messageId: mail.messageId,
      });
    }
    // Added to a group we were waiting to join (or had left): the sender is a member too.
    if (!selfBefore && this.#members.isMember(chat.id, ContactId.SELF)) {
      if (!this.#members.isMember(chat.id, senderId)) {
        const at = Math.min(mail.sentAt || nowSeconds(this.ctx), nowSeconds(this.ctx));
        this.#members.add(chat.id, senderId, at);
      }
    }
    return before === this.ctx.store.chats.memberIds(chat.id).join(",") ? 0 : 1;
  }

  #removedId(chat: ChatRecord, h: GroupHeaders): number | undefined {
    if (h.removedFpr !== undefined) {
      if (h.removedFpr === this.#contacts.self().fingerprint) return ContactId.SELF;
      const c = this.ctx.store.contacts.byFingerprint(h.removedFpr);
      if (c !== undefined) return c.id;
    }
    if (h.removed === undefined) return undefined;
    if (h.removed === this.#contacts.self().addr) return ContactId.SELF;
    return this.ctx.store.chats.memberships(chat.id).map((m) => m.contactId)
      .find((id) => this.#contacts.get(id)?.addr === h.removed);
  }

  /** A newer `(timestamp, name)` renames the group (Delta Chat compares the pair). */
  #applyName(chat: ChatRecord, mail: ReadMail, h: GroupHeaders, name?: string): number {
    if (name === undefined || name === chat.name) return 0;
    const ts = h.nameTimestamp ?? mail.sentAt;
    const newer = ts > chat.nameTimestamp || (ts === chat.nameTimestamp && name > chat.name);
    if (!newer) return 0;
    this.ctx.store.chats.setGroupName(chat.id, name, ts);
    return 1;
  }

  #applyAvatar(chat: ChatRecord, mail: ReadMail, prep: GroupPrep): number {
    if (prep.avatar === undefined || mail.sentAt < chat.avatarTimestamp) return 0;
    this.ctx.store.chats.setAvatar(chat.id, prep.avatar?.blob ?? "", mail.sentAt);
    return 1;
  }

  /** The info message a system message becomes, with Delta Chat's wording. */
  #info(
    mail: ReadMail,
    h: GroupHeaders,
    senderId: number,
    systemType: string | undefined,
    oldName: string,
  ): { text: string; systemType: string } | undefined {
    if (systemType === undefined) return undefined;
    const by = this.#contacts.details(senderId)?.displayName ?? mail.from.addr;
    const nameOf = (addr: string) => {
      const id = this.#contacts.lookupIdByAddr(addr);
      return id === undefined ? addr : this.#contacts.details(id)!.displayName;
    };
    switch (systemType) {
      case SystemMessage.MEMBER_ADDED:
        return { systemType, text: `Member ${nameOf(h.added ?? "")} added by ${by}.` };
      case SystemMessage.MEMBER_REMOVED:
        return {
          systemType,
          text: h.removed === mail.from.addr
            ? `Group left by ${by}.`
            : `Member ${nameOf(h.removed ?? "")} removed by ${by}.`,
        };
      case SystemMessage.GROUP_NAME_CHANGED: {
        const now = mail.headers.get(Header.CHAT_GROUP_NAME);
        const to = now === undefined ? "" : decodeEncodedWords(now).trim();
        return {
          systemType,
          text: `Group name changed from "${h.nameChanged ?? oldName}" to "${to}" by ${by}.`,
        };
      }
      case SystemMessage.GROUP_IMAGE_CHANGED:
        return {
          systemType,
          text: mail.headers.get(Header.CHAT_GROUP_AVATAR)?.trim() === "0"
            ? `Group image deleted by ${by}.`
            : `Group image changed by ${by}.`,
        };
      default:
        return undefined;
    }
  }
}

/** Kinds of system messages that change a group (ignored from non-members). */
function isGroupChange(systemType: string): boolean {
  return systemType === SystemMessage.MEMBER_ADDED ||
    systemType === SystemMessage.MEMBER_REMOVED ||
    systemType === SystemMessage.GROUP_NAME_CHANGED ||
    systemType === SystemMessage.GROUP_IMAGE_CHANGED ||
    systemType === SystemMessage.GROUP_DESCRIPTION_CHANGED;
}

function discard(reason: string): ChatTarget {
  return { kind: "discard", reason };
}

/** Chat `chatId`, with the info message the mail becomes when it is a system message. */
function inChat(
  chatId: number,
  info: { text: string; systemType: string } | undefined,
): ChatTarget {
  return info === undefined ? { kind: "chat", chatId } : { kind: "chat", chatId, info };
}
