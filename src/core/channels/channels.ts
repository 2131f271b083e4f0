/**
 * Broadcast channels (chat type 130) as Delta Chat 2.x has them (docs/protocol-notes.md §9): a
 * channel we own has subscribers, who join only by its invite and get the secret in a
 * member-added sent to them alone; its posts reach every subscriber. A channel we subscribe to
 * is read-only; its owner's posts are shown; leaving tells the owner alone. Received channel
 * mail is applied here too (`applyReceived`).
 */
import { ChatType, ContactId } from "../../constants.ts";
import { newToken } from "../../crypto/random.ts";
import { GatewayError } from "../../errors.ts";
import { decodeEncodedWords } from "../../mime/parser.ts";
import { Header, SystemMessage } from "../../protocol.ts";
import type { ChatRecord } from "../../store/mod.ts";
import { type ChannelChange, isValidChannelSecret, newChannelSecret } from "./mail.ts";
import { Chats } from "../chats/chats.ts";
import { Contacts } from "../contacts/contacts.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import { cleanGroupName } from "../groups/groups.ts";
import { GroupMembers } from "../groups/members.ts";
import type { ChatTarget } from "../groups/receive.ts";
import type { ReadMail } from "../receive/mail_reader.ts";
import { Messages } from "../chats/messages.ts";
import type { SendSteps } from "../send/rendered_mail.ts";

/** Channel changes and reception. */
export class Channels {
  readonly #chats: Chats;
  readonly #contacts: Contacts;
  readonly #members: GroupMembers;

  constructor(private readonly ctx: CoreContext, private readonly send?: SendSteps) {
    this.#chats = new Chats(ctx);
    this.#contacts = new Contacts(ctx);
    this.#members = new GroupMembers(ctx);
  }

  /** A channel chat, or -1 saying why not. */
  requireChannel(chatId: number): ChatRecord {
    const chat = this.#chats.require(chatId);
    if (chat.type !== ChatType.BROADCAST) {
      throw new GatewayError(`chat ${chatId} is not a channel (chat type ${chat.type})`);
    }
    return chat;
  }

  /** Creates a channel we own, without subscribers. Events: `MsgsChanged{0,0}`, `ChatModified`. */
  create(name: string): number {
    const clean = cleanGroupName(name);
    const now = nowSeconds(this.ctx);
    return this.ctx.tx.run((emit) => {
      const chatId = this.ctx.store.chats.insert({
        type: ChatType.BROADCAST,
        name: clean,
        grpid: newToken(),
        createdAt: now,
        nameTimestamp: now,
        broadcastSecret: newChannelSecret(),
        ownerId: ContactId.SELF,
      });
      emit({ kind: "MsgsChanged", chatId: 0, msgId: 0 });
      emit({ kind: "ChatModified", chatId });
      return chatId;
    });
  }

  /**
   * A verified joiner of our channel becomes a subscriber and gets, alone, the member-added with
   * the secret (`Secure-Join: vg-member-added`). "Member X added." is stored here.
   */
  async addSubscriber(chatId: number, contactId: number): Promise<void> {
    const chat = this.requireChannel(chatId);
    if (chat.ownerId !== ContactId.SELF) throw new GatewayError(`channel ${chatId} is not ours`);
    const c = this.#contacts.get(contactId)!;
    this.ctx.tx.run((emit) => {
      this.#members.add(chatId, contactId, nowSeconds(this.ctx));
      emit({ kind: "ChatModified", chatId });
    });
    await this.#send(chat, { kind: "member-added", addr: c.addr, fingerprint: c.fingerprint }, {
      to: contactId,
      text: `Member ${this.#contacts.details(contactId)!.displayName} added.`,
      systemType: SystemMessage.MEMBER_ADDED,
    });
  }

  /**
   * Leaves a channel we subscribe to: the owner alone is told, the secret is dropped, and posts
   * no longer open. (Our own channels cannot be left.)
   */
  async leave(chatId: number): Promise<void> {
    const chat = this.requireChannel(chatId);
    if (chat.ownerId === ContactId.SELF) {
      throw new GatewayError(`channel ${chatId} is yours: it cannot be left`);
    }
    if (!this.#members.isMember(chatId, ContactId.SELF)) {
      throw new GatewayError(`you are not subscribed to channel ${chatId}`);
    }
    const self = this.#contacts.self();
    await this.#send(chat, {
      kind: "member-removed",
      addr: self.addr,
      fingerprint: self.fingerprint,
    }, {
      to: chat.ownerId,
      text: "You left the channel.",
      systemType: SystemMessage.MEMBER_REMOVED,
    });
    this.ctx.tx.run((emit) => {
      this.#members.remove(chatId, ContactId.SELF, nowSeconds(this.ctx));
      this.ctx.store.chats.setBroadcastSecret(chatId, "");
      emit({ kind: "ChatModified", chatId });
    });
  }

  async #send(
    chat: ChatRecord,
    change: ChannelChange,
    o: { to: number; text: string; systemType: SystemMessage },
  ): Promise<void> {
    if (this.send === undefined) throw new Error("Channels needs the send steps to send");
    await new Messages(this.ctx).createOutgoing({
      chatId: chat.id,
      text: change.kind === "member-added"
        ? `Member ${change.addr} was added.`
        : `Member ${change.addr} was removed.`,
      channelChange: { ...change, to: o.to },
      info: { text: o.text, systemType: o.systemType },
    }, this.send);
  }

  /**
   * A received mail naming channel `listId` (inside the reception transaction): in a channel we
   * own, a subscriber's leave is applied silently; in one we subscribe to, the owner's posts and
   * its member-added (with the secret) are stored. Everything else is discarded.
   */
  applyReceived(mail: ReadMail, listId: string, senderId: number): ChatTarget {
    const chat = this.ctx.store.chats.byGrpid(listId);
    if (chat === undefined || chat.type !== ChatType.BROADCAST) {
      return { kind: "discard", reason: "a post of a channel we do not subscribe to" };
    }
    const h = mail.headers;
    if (chat.ownerId === ContactId.SELF) {
      const removed = h.get(Header.CHAT_GROUP_MEMBER_REMOVED)?.trim().toLowerCase();
      if (removed === mail.from.addr && this.#members.isMember(chat.id, senderId)) {
        // Silently, without a past-member entry (as Delta Chat).
        this.ctx.tx.run((emit) => {
          this.ctx.store.chats.deleteMember(chat.id, senderId);
          emit({ kind: "ChatModified", chatId: chat.id });
        });
        return { kind: "discard", reason: "a subscriber left the channel (applied)" };
      }
      return { kind: "discard", reason: "mail to our own channel from a subscriber" };
    }
    if (senderId !== chat.ownerId) {
      return { kind: "discard", reason: "channel mail not from the channel's owner" };
    }
    const added = h.get(Header.CHAT_GROUP_MEMBER_ADDED)?.trim().toLowerCase();
    if (added !== undefined && added === this.#contacts.self().addr) {
      const secret = h.get(Header.CHAT_BROADCAST_SECRET)?.trim() ?? "";
      this.ctx.tx.run((emit) => {
        if (isValidChannelSecret(secret)) this.ctx.store.chats.setBroadcastSecret(chat.id, secret);
        const now = nowSeconds(this.ctx);
        this.#members.add(chat.id, ContactId.SELF, now);
        this.#members.add(chat.id, senderId, now);
        emit({ kind: "ChatModified", chatId: chat.id });
      });
      return {
        kind: "chat",
        chatId: chat.id,
        info: { text: "You joined the channel.", systemType: SystemMessage.MEMBER_ADDED },
      };
    }
    return this.#applyName(chat, mail);
  }

  /** The owner renamed the channel: a newer `Chat-Group-Name-Timestamp` wins (as in groups). */
  #applyName(chat: ChatRecord, mail: ReadMail): ChatTarget {
    const raw = mail.headers.get(Header.CHAT_GROUP_NAME);
    const name = raw === undefined ? "" : decodeEncodedWords(raw).trim();
    const ts = Number(mail.headers.get(Header.CHAT_GROUP_NAME_TIMESTAMP)?.trim() ?? "") || 0;
    if (name === "" || name === chat.name || ts <= chat.nameTimestamp) {
      return { kind: "chat", chatId: chat.id };
    }
    this.ctx.tx.run((emit) => {
      this.ctx.store.chats.setGroupName(chat.id, name, Math.min(ts, nowSeconds(this.ctx) + 60));
      emit({ kind: "ChatModified", chatId: chat.id });
    });
    const changed = mail.headers.get(Header.CHAT_GROUP_NAME_CHANGED) !== undefined;
    return {
      kind: "chat",
      chatId: chat.id,
      ...(changed
        ? {
          info: {
            text: `Channel name changed from "${chat.name}" to "${name}".`,
            systemType: SystemMessage.GROUP_NAME_CHANGED,
          },
        }
        : {}),
    };
  }
}
