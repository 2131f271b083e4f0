/**
 * Group membership as Delta Chat keeps it: each member row has the times it was added and
 * removed (a member while added >= removed), and a mail to the group lists current and past
 * members with those times (group_mail.ts). Builds the group part of an outgoing mail and the
 * keys it is encrypted to.
 */
import { ChatType, ContactId } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import type { ChatRecord, ContactRecord, MembershipRecord } from "../../store/mod.ts";
import { blobPath, mimeOf } from "../blobs.ts";
import { Contacts } from "../contacts/contacts.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import {
  GOSSIP_PERIOD_SECONDS,
  type GroupChange,
  type GroupMail,
  type GroupMailMember,
  PAST_MEMBER_SECONDS,
} from "./mail.ts";

/** The group part of a mail and the contacts it is encrypted to (self is added by the sealer). */
export interface GroupSendPlan {
  readonly mail: GroupMail;
  readonly recipients: ContactRecord[];
}

/** True when a member row is a current member. */
export function isCurrent(m: MembershipRecord): boolean {
  return m.addTimestamp >= m.removeTimestamp;
}

/** Membership reads and writes of groups. */
export class GroupMembers {
  readonly #contacts: Contacts;

  constructor(private readonly ctx: CoreContext) {
    this.#contacts = new Contacts(ctx);
  }

  /** True when `contactId` is a current member of `chatId`. */
  isMember(chatId: number, contactId: number): boolean {
    const m = this.ctx.store.chats.membership(chatId, contactId);
    return m !== undefined && isCurrent(m);
  }

  /** Makes `contactId` a member added at `at` (Unix seconds). */
  add(chatId: number, contactId: number, at: number): void {
    const old = this.ctx.store.chats.membership(chatId, contactId);
    this.ctx.store.chats.setMembership(chatId, {
      contactId,
      addTimestamp: Math.max(at, old?.removeTimestamp ?? 0),
      removeTimestamp: old?.removeTimestamp ?? 0,
    });
  }

  /** Makes `contactId` a past member removed at `at` (Unix seconds). */
  remove(chatId: number, contactId: number, at: number): void {
    const old = this.ctx.store.chats.membership(chatId, contactId);
    if (old === undefined) return;
    this.ctx.store.chats.setMembership(chatId, {
      contactId,
      addTimestamp: old.addTimestamp,
      removeTimestamp: Math.max(at, old.addTimestamp + 1),
    });
  }

  /** Past member ids shown by `get_past_chat_contacts` (removed within 60 days). */
  pastIds(chatId: number): number[] {
    return this.ctx.store.chats.pastMemberIds(chatId, nowSeconds(this.ctx) - PAST_MEMBER_SECONDS);
  }

  #listed(m: MembershipRecord, timestamp: number): GroupMailMember | undefined {
    const c = this.#contacts.details(m.contactId);
    if (c === undefined || c.fingerprint === "") return undefined;
    return {
      addr: c.addr,
      name: m.contactId === ContactId.SELF ? c.authName : c.authName || c.name,
      fingerprint: c.fingerprint,
      timestamp,
    };
  }

  /**
   * Who an ordinary mail to the group (a reaction, an edit) is encrypted to: every current member
   * with a key but self. -1 when self is not a member or nobody else has a key.
   */
  recipientsOf(chat: ChatRecord): ContactRecord[] {
    if (!this.isMember(chat.id, ContactId.SELF)) {
      throw new GatewayError(
        `cannot send to group chat ${chat.id}: you are not a member of it any more`,
      );
    }
    const recipients = this.ctx.store.chats.memberIds(chat.id)
      .filter((id) => id !== ContactId.SELF)
      .map((id) => this.#contacts.get(id))
      .filter((c): c is ContactRecord => c !== undefined && c.publicKey.length > 0);
    if (recipients.length === 0) {
      throw new GatewayError(
        `cannot send to group chat ${chat.id}: no other member has an encryption key`,
      );
    }
    return recipients;
  }

  /**
   * The group part of a mail to `chat` announcing `change` (or an ordinary message), and who it
   * is encrypted to: every current member with a key but self, plus the member a removal is
   * about. Members whose key is unknown stay in `To` but cannot read the mail (as Delta Chat).
   * Refuses (-1) when self is not a member, or when nobody else would get the mail.
   */
  async plan(chat: ChatRecord, change?: GroupChange): Promise<GroupSendPlan> {
    if (chat.type !== ChatType.GROUP) throw new Error(`chat ${chat.id} is not a group`);
    const removedSelf = change?.kind === "member-removed" &&
      change.fingerprint === this.#contacts.self().fingerprint;
    if (!removedSelf && !this.isMember(chat.id, ContactId.SELF)) {
      throw new GatewayError(
        `cannot send to group chat ${chat.id}: you are not a member of it any more`,
      );
    }
    const now = nowSeconds(this.ctx);
    const rows = this.ctx.store.chats.memberships(chat.id);
    let to = rows.filter(isCurrent).map((m) => this.#listed(m, m.addTimestamp));
    const pastRows = rows.filter((m) =>
      !isCurrent(m) && m.removeTimestamp >= now - PAST_MEMBER_SECONDS
    );
    let past = pastRows.map((m) => this.#listed(m, m.removeTimestamp));
    const selfAddr = this.#contacts.self().addr;
    if (to.length > 1) to = to.filter((m) => m?.addr !== selfAddr);
    past = past.filter((m) => m !== undefined);
    const recipients = rows.filter(isCurrent)
      .filter((m) => m.contactId !== ContactId.SELF)
      .map((m) => this.#contacts.get(m.contactId))
      .filter((c): c is ContactRecord => c !== undefined && c.publicKey.length > 0);
    if (change?.kind === "member-removed" && !removedSelf) {
      const gone = this.ctx.store.contacts.byFingerprint(change.fingerprint);
      if (gone !== undefined && gone.publicKey.length > 0) recipients.push(gone);
    }
    if (recipients.length === 0) {
      throw new GatewayError(
        `cannot send to group chat ${chat.id}: no other member has an encryption key`,
      );
    }
    const gossip = change?.kind === "member-added" ||
      (recipients.length > 1 && now - chat.gossipedAt >= GOSSIP_PERIOD_SECONDS);
    const avatar = change?.kind === "member-added" ? await this.#avatar(chat) : undefined;
    return {
      mail: {
        grpid: chat.grpid,
        name: chat.name,
        nameTimestamp: chat.nameTimestamp,
        to: to.filter((m) => m !== undefined),
        past: past.filter((m) => m !== undefined),
        ...(change === undefined ? {} : { change }),
        gossip,
        ...(avatar === undefined ? {} : { avatar }),
      },
      recipients,
    };
  }

  async #avatar(chat: ChatRecord) {
    if (chat.avatar === "") return undefined;
    try {
      const bytes = await Deno.readFile(blobPath(this.ctx.blobDir, chat.avatar));
      return { bytes, mime: mimeOf(chat.avatar) };
    } catch {
      return undefined;
    }
  }
}
