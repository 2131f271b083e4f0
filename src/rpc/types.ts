/**
 * Wire shapes of contacts, chats and messages (docs/contract.md §2 fields plus the
 * deltachat-jsonrpc fields clients use) and the converters from domain values. The only place these
 * JSON shapes exist.
 */
import { ChatType, ContactId } from "../constants.ts";
import { Viewtype } from "../protocol.ts";
import type { ChatSummary } from "../core/chats/mod.ts";
import type { ContactDetails } from "../core/contacts/mod.ts";
import type { MessageDetails } from "../core/chats/mod.ts";
import type { ChatRecord } from "../store/mod.ts";

/** A contact (`get_contact`, `sender` of a message). `fingerprint` is a gateway extra. */
export interface ContactObject {
  readonly id: number;
  readonly address: string;
  readonly displayName: string;
  readonly authName: string;
  readonly name: string;
  readonly nameAndAddr: string;
  readonly color: string;
  readonly status: string;
  readonly profileImage: null;
  readonly isBlocked: boolean;
  readonly isBot: boolean;
  readonly isKeyContact: boolean;
  readonly e2eeAvail: boolean;
  readonly isVerified: boolean;
  /** Who verified the key (1 = this account); null when unverified or self. */
  readonly verifierId: number | null;
  /** Unix seconds; 0 when never seen. */
  readonly lastSeen: number;
  readonly wasSeenRecently: boolean;
  /** Upper-case hex; null for an address-only contact. */
  readonly fingerprint: string | null;
}

/** A message (`get_message`, entries of `get_messages`); both `viewtype` spellings. */
export interface MessageObject {
  readonly kind: "message";
  readonly id: number;
  readonly chatId: number;
  readonly fromId: number;
  readonly text: string;
  /** Unix seconds (the sender's Date, else the sort time). */
  readonly timestamp: number;
  readonly sortTimestamp: number;
  readonly receivedTimestamp: number;
  readonly hasDeviatingTimestamp: boolean;
  readonly state: number;
  readonly file: string | null;
  readonly fileBytes: number;
  readonly fileName: string | null;
  readonly fileMime: string | null;
  readonly viewtype: string;
  readonly viewType: string;
  readonly sender: ContactObject;
  readonly subject: string;
  readonly error: string | null;
  readonly quote: QuoteObject | null;
  readonly parentId: number | null;
  readonly isInfo: boolean;
  readonly isEdited: boolean;
  readonly isForwarded: boolean;
  readonly isBot: boolean;
  readonly isPinned: boolean;
  readonly showPadlock: boolean;
  readonly hasHtml: boolean;
  readonly hasLocation: boolean;
  readonly systemMessageType: string;
  readonly infoContactId: null;
  readonly overrideSenderName: null;
  readonly duration: number;
  readonly dimensionsWidth: number;
  readonly dimensionsHeight: number;
  readonly downloadState: string;
  readonly webxdcHref: null;
  readonly originalMsgId: null;
  readonly savedMessageId: null;
  readonly reactions: ReactionsObject | null;
  readonly vcardContact: null;
}

/**
 * The quote of a reply, as Delta Chat gives it: `WithMessage` when the quoted message is stored
 * here (any chat), else `JustText`.
 */
export type QuoteObject =
  | { readonly kind: "JustText"; readonly text: string }
  | {
    readonly kind: "WithMessage";
    readonly text: string;
    readonly messageId: number;
    readonly chatId: number;
    readonly authorDisplayName: string;
    readonly authorDisplayColor: string;
    readonly overrideSenderName: null;
    readonly image: string | null;
    readonly isForwarded: false;
    readonly viewType: string;
  };

const QUOTED_IMAGES: ReadonlySet<string> = new Set([
  Viewtype.IMAGE,
  Viewtype.GIF,
  Viewtype.STICKER,
]);

/** The quote object of a message with quote text `text` (see `QuoteObject`). */
export function toQuoteObject(text: string, parent: MessageDetails["parent"]): QuoteObject | null {
  if (text === "") return null;
  if (parent === undefined) return { kind: "JustText", text };
  const p = parent.message;
  const author = toContactObject(parent.sender);
  return {
    kind: "WithMessage",
    text,
    messageId: p.id,
    chatId: p.chatId,
    authorDisplayName: author.displayName,
    authorDisplayColor: author.color,
    overrideSenderName: null,
    image: QUOTED_IMAGES.has(p.viewtype) ? parent.file : null,
    isForwarded: false,
    viewType: p.viewtype,
  };
}

/** Reactions on a message, as Delta Chat's JSON-RPC gives them. */
export interface ReactionsObject {
  /** Contact id (string) → that contact's reactions. */
  readonly reactionsByContact: Record<string, string[]>;
  /** Each distinct reaction with how many contacts gave it, most frequent first. */
  readonly reactions: { emoji: string; count: number; isFromSelf: boolean }[];
}

/** Converts a message's reactions; null when it has none (as Delta Chat answers). */
export function toReactionsObject(
  rows: readonly { contactId: number; reaction: string }[],
): ReactionsObject | null {
  if (rows.length === 0) return null;
  const byContact: Record<string, string[]> = {};
  const counts = new Map<string, { emoji: string; count: number; isFromSelf: boolean }>();
  for (const r of rows) {
    byContact[String(r.contactId)] = [r.reaction];
    const c = counts.get(r.reaction) ?? { emoji: r.reaction, count: 0, isFromSelf: false };
    c.count++;
    c.isFromSelf ||= r.contactId === ContactId.SELF;
    counts.set(r.reaction, c);
  }
  const reactions = [...counts.values()].sort((a, b) => b.count - a.count);
  return { reactionsByContact: byContact, reactions };
}

/** `get_messages` entry for an id that does not exist. */
export interface MessageLoadError {
  readonly kind: "loadingError";
  readonly error: string;
}

/** A chat-list entry; `chatType` is the contract's integer (docs/contract.md §2). */
export interface ChatListItem {
  readonly kind: "ChatListItem";
  readonly id: number;
  readonly name: string;
  readonly chatType: number;
  readonly freshMessageCounter: number;
  /** Unix ms of the newest message (else of the chat's creation). */
  readonly lastUpdated: number;
  readonly summaryText1: string;
  readonly summaryText2: string;
  /** State of the newest message; 0 without one. */
  readonly summaryStatus: number;
  readonly summaryPreviewImage: null;
  readonly lastMessageId: number | null;
  readonly lastMessageType: string | null;
  readonly dmChatContact: number | null;
  /** Absolute path of the group's avatar, else null. */
  readonly avatarPath: string | null;
  readonly color: string;
  readonly isEncrypted: boolean;
  readonly isGroup: boolean;
  readonly isContactRequest: boolean;
  readonly isArchived: boolean;
  readonly isMuted: boolean;
  readonly isPinned: boolean;
  readonly isSelfTalk: boolean;
  readonly isDeviceTalk: boolean;
  readonly isSendingLocation: boolean;
  readonly isSelfInGroup: boolean;
  readonly wasSeenRecently: boolean;
}

/** The archive link (chat id 6) in the chat list. */
export interface ArchiveLinkItem {
  readonly kind: "ArchiveLink";
  readonly freshMessageCounter: number;
}

/** `get_chatlist_items_by_entries` entry for an id that does not exist. */
export interface ChatListItemError {
  readonly kind: "Error";
  readonly id: number;
  readonly error: string;
}

/** `get_basic_chat_info`. */
export interface BasicChat {
  readonly id: number;
  readonly name: string;
  readonly chatType: number;
  readonly isEncrypted: boolean;
  /** Absolute path of the group's avatar, else null. */
  readonly profileImage: string | null;
  readonly archived: boolean;
  readonly pinned: boolean;
  readonly isMuted: boolean;
  readonly isUnpromoted: boolean;
  readonly isSelfTalk: boolean;
  readonly isDeviceChat: boolean;
  readonly isContactRequest: boolean;
  readonly color: string;
  /**
   * For a channel (chatType 130): `"owner"` for ours (Delta Chat's OutBroadcast), `"subscriber"`
   * for one we subscribed to (InBroadcast, read-only); null for other chats.
   */
  readonly channelRole: "owner" | "subscriber" | null;
}

/** `get_full_chat_by_id`; `contactIds` as Delta Chat (1:1: `[peer]`). */
export interface FullChat extends BasicChat {
  readonly contactIds: number[];
  readonly pastContactIds: number[];
  readonly freshMessageCounter: number;
  readonly selfInGroup: boolean;
  readonly canSend: boolean;
  readonly ephemeralTimer: number;
  readonly wasSeenRecently: boolean;
  readonly mailingListAddress: null;
}

/** "Seen recently" window of Delta Chat (10 minutes). */
const SEEN_RECENTLY_S = 600;
const SUMMARY_CHARS = 160;

/** A stable `#rrggbb` color for a seed (fingerprint, address or group id). */
export function colorOf(seed: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(seed.toLowerCase())) {
    h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  }
  const hue = h % 360, s = 0.55, l = 0.45;
  const k = (n: number) => (n + hue / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
  const hex = (x: number) => Math.round(x * 255).toString(16).padStart(2, "0");
  return `#${hex(f(0))}${hex(f(8))}${hex(f(4))}`;
}

/** Delta Chat's `wasSeenRecently`: the contact was seen within the last 10 minutes. */
export function seenRecently(lastSeen: number, nowMs = Date.now()): boolean {
  return lastSeen > 0 && nowMs / 1000 - lastSeen < SEEN_RECENTLY_S;
}

/** Converts a contact. */
export function toContactObject(c: ContactDetails, nowMs = Date.now()): ContactObject {
  const isSelf = c.id === ContactId.SELF;
  return {
    id: c.id,
    address: c.addr,
    displayName: c.displayName,
    authName: c.authName,
    name: c.name,
    nameAndAddr: c.addr === "" ? c.displayName : `${c.displayName} (${c.addr})`,
    color: colorOf(c.fingerprint || c.addr || String(c.id)),
    status: "",
    profileImage: null,
    isBlocked: false,
    isBot: false,
    isKeyContact: c.fingerprint !== "",
    e2eeAvail: c.fingerprint !== "",
    isVerified: c.verified,
    verifierId: isSelf || !c.verified ? null : c.verifierId,
    lastSeen: c.lastSeen,
    wasSeenRecently: seenRecently(c.lastSeen, nowMs),
    fingerprint: c.fingerprint === "" ? null : c.fingerprint,
  };
}

/** Converts a message (with its sender, blob path and parent). */
export function toMessageObject(d: MessageDetails): MessageObject {
  const m = d.message;
  return {
    kind: "message",
    id: m.id,
    chatId: m.chatId,
    fromId: m.fromId,
    text: m.text,
    timestamp: m.timestampSent || m.timestamp,
    sortTimestamp: m.timestamp,
    receivedTimestamp: m.timestampRcvd || m.timestamp,
    hasDeviatingTimestamp: false,
    state: m.state,
    file: d.file,
    fileBytes: d.file === null ? 0 : m.fileBytes,
    fileName: m.fileName || null,
    fileMime: m.fileMime || null,
    viewtype: m.viewtype,
    viewType: m.viewtype,
    sender: toContactObject(d.sender),
    subject: m.subject,
    error: m.error || null,
    quote: toQuoteObject(m.quote, d.parent),
    parentId: d.parentId,
    isInfo: m.isInfo,
    isEdited: m.edited,
    isForwarded: false,
    isBot: false,
    isPinned: false,
    showPadlock: m.fromId === ContactId.SELF || m.fromFingerprint !== "",
    hasHtml: false,
    hasLocation: false,
    systemMessageType: m.systemType || "Unknown",
    infoContactId: null,
    overrideSenderName: null,
    duration: 0,
    dimensionsWidth: 0,
    dimensionsHeight: 0,
    downloadState: m.downloadState,
    webxdcHref: null,
    originalMsgId: null,
    savedMessageId: null,
    reactions: toReactionsObject(d.reactions),
    vcardContact: null,
  };
}

/** The color of a chat: its peer's for a 1:1 chat, else from the group id or name. */
export function chatColor(chat: ChatRecord, peer?: ContactDetails): string {
  if (peer !== undefined) return colorOf(peer.fingerprint || peer.addr);
  return colorOf(chat.grpid || chat.name || String(chat.id));
}

function summaryTexts(s: ChatSummary): [string, string] {
  const m = s.lastMessage;
  if (m === undefined) return ["", ""];
  const text = (m.text || m.fileName).replace(/\s+/g, " ").trim();
  const cut = [...text].length > SUMMARY_CHARS
    ? [...text].slice(0, SUMMARY_CHARS - 1).join("") + "…"
    : text;
  if (s.chat.type === ChatType.SINGLE || m.isInfo) return ["", cut];
  const who = m.fromId === ContactId.SELF ? "Me" : s.lastSender?.displayName ?? "";
  return [who, cut];
}

/** Converts a chat summary; `peer` is the 1:1 chat's contact. */
export function toChatListItem(
  s: ChatSummary,
  peer: ContactDetails | undefined,
  selfInChat: boolean,
  nowMs = Date.now(),
  avatarPath: string | null = null,
): ChatListItem {
  const [summaryText1, summaryText2] = summaryTexts(s);
  return {
    kind: "ChatListItem",
    id: s.chat.id,
    name: s.name,
    chatType: s.chat.type,
    freshMessageCounter: s.freshCount,
    lastUpdated: s.lastUpdated,
    summaryText1,
    summaryText2,
    summaryStatus: s.lastMessage?.state ?? 0,
    summaryPreviewImage: null,
    lastMessageId: s.lastMessage?.id ?? null,
    lastMessageType: s.lastMessage?.viewtype ?? null,
    dmChatContact: s.dmContactId,
    avatarPath,
    color: chatColor(s.chat, peer),
    isEncrypted: true,
    isGroup: s.chat.type === ChatType.GROUP,
    isContactRequest: false,
    isArchived: s.chat.archived,
    isMuted: s.chat.muted,
    isPinned: false,
    isSelfTalk: false,
    isDeviceTalk: false,
    isSendingLocation: false,
    isSelfInGroup: selfInChat,
    wasSeenRecently: peer !== undefined && seenRecently(peer.lastSeen, nowMs),
  };
}

/** Converts a chat to the basic chat info. */
export function toBasicChat(
  chat: ChatRecord,
  name: string,
  peer?: ContactDetails,
  profileImage: string | null = null,
): BasicChat {
  return {
    id: chat.id,
    name,
    chatType: chat.type,
    isEncrypted: true,
    profileImage,
    archived: chat.archived,
    pinned: false,
    isMuted: chat.muted,
    isUnpromoted: chat.unpromoted,
    channelRole: chat.type !== ChatType.BROADCAST
      ? null
      : chat.ownerId === ContactId.SELF
      ? "owner"
      : "subscriber",
    isSelfTalk: false,
    isDeviceChat: false,
    isContactRequest: false,
    color: chatColor(chat, peer),
  };
}
