/**
 * What a mail of a broadcast channel (chat type 130) says, as Delta Chat 2.x writes it
 * (docs/protocol-notes.md §9): a post goes to every subscriber encrypted with the channel secret,
 * with hidden recipients and `Chat-List-ID: <name> <id>`; the member-added that ends a
 * subscriber's join goes to that subscriber alone (asymmetric) with the secret; a subscriber's
 * leave goes to the owner alone. `channelPlan` picks the recipients; `channelHeaders` the lines.
 */
import { ContactId } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import { Header, SecureJoinStep } from "../../protocol.ts";
import type { ChatRecord, ContactRecord } from "../../store/mod.ts";
import type { CoreContext } from "../context.ts";
import { toBase64 } from "../../crypto/armor.ts";

/** The change a channel system mail announces. */
export type ChannelChange =
  /** To the new subscriber only, with the secret. */
  | { readonly kind: "member-added"; readonly addr: string; readonly fingerprint: string }
  /** A subscriber leaving, to the owner only. */
  | { readonly kind: "member-removed"; readonly addr: string; readonly fingerprint: string };

/** The channel part of one outgoing mail. */
export interface ChannelMail {
  readonly grpid: string;
  readonly name: string;
  readonly nameTimestamp: number;
  /** A post: encrypted with this secret to every subscriber. */
  readonly secret: string;
  /** A system mail to one contact (asymmetric) instead of a post. */
  readonly change?: ChannelChange;
}

/** The mail plan: the channel part and who gets it (subscribers, or the one contact). */
export interface ChannelSendPlan {
  readonly mail: ChannelMail;
  readonly recipients: ContactRecord[];
}

/** A channel secret: 33 random bytes as URL-safe base64, cut to 43 characters (Delta Chat). */
export function newChannelSecret(): string {
  const b = crypto.getRandomValues(new Uint8Array(33));
  return btoa(String.fromCharCode(...b)).replaceAll("+", "-").replaceAll("/", "_").slice(0, 43);
}

/** True for a secret Delta Chat accepts: 43–100 URL-safe base64 characters. */
export function isValidChannelSecret(s: string): boolean {
  return /^[A-Za-z0-9_-]{43,100}$/.test(s);
}

/**
 * Recipients and channel part of a mail to `chat`: a post (no change) from the owner goes to
 * every subscriber with a key; a member-added goes to the new subscriber; a leave to the owner.
 * Refuses (-1) posts to a channel we only subscribe to, and posts nobody would get.
 */
export function channelPlan(
  ctx: CoreContext,
  chat: ChatRecord,
  change?: ChannelChange & { readonly to: number },
): ChannelSendPlan {
  const mail = {
    grpid: chat.grpid,
    name: chat.name,
    nameTimestamp: chat.nameTimestamp,
    secret: chat.broadcastSecret,
  };
  if (change !== undefined) {
    const to = ctx.store.contacts.get(change.to);
    if (to === undefined || to.publicKey.length === 0) {
      throw new GatewayError(`cannot write to contact ${change.to}: no encryption key`);
    }
    const { to: _, ...c } = change;
    return { mail: { ...mail, change: c }, recipients: [to] };
  }
  if (chat.ownerId !== ContactId.SELF) {
    throw new GatewayError(
      `cannot send to channel ${chat.id}: only its owner posts; reply in the 1:1 chat instead`,
    );
  }
  const recipients = ctx.store.chats.memberIds(chat.id)
    .filter((id) => id !== ContactId.SELF)
    .map((id) => ctx.store.contacts.get(id))
    .filter((c): c is ContactRecord => c !== undefined && c.publicKey.length > 0);
  if (recipients.length === 0) {
    throw new GatewayError(`cannot send to channel ${chat.id}: it has no subscribers yet`);
  }
  return { mail, recipients };
}

/** The channel header lines of a mail (all inner). */
export function channelHeaders(
  c: ChannelMail,
  encodeWord: (text: string) => string,
): [string, string][] {
  const h: [string, string][] = [[Header.CHAT_LIST_ID, `${encodeWord(c.name)} <${c.grpid}>`]];
  if (c.change?.kind === "member-added") h.push([Header.CHAT_BROADCAST_SECRET, c.secret]);
  h.push([Header.CHAT_GROUP_NAME, encodeWord(c.name)]);
  h.push([Header.CHAT_GROUP_NAME_TIMESTAMP, String(c.nameTimestamp)]);
  if (c.change?.kind === "member-added") {
    h.push([Header.CHAT_GROUP_MEMBER_ADDED, c.change.addr.toLowerCase()]);
    h.push([Header.CHAT_GROUP_MEMBER_ADDED_FPR, c.change.fingerprint]);
    h.push([Header.SECURE_JOIN, SecureJoinStep.VG_MEMBER_ADDED]);
    h.push([Header.CHAT_GROUP_DESCRIPTION, `=?utf-8?B?${toBase64(new Uint8Array())}?=`]);
  } else if (c.change?.kind === "member-removed") {
    h.push([Header.CHAT_GROUP_MEMBER_REMOVED, c.change.addr.toLowerCase()]);
    h.push([Header.CHAT_GROUP_MEMBER_REMOVED_FPR, c.change.fingerprint]);
  }
  return h;
}
