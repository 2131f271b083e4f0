/**
 * Chat RPC methods: `create_chat_by_contact_id`, `get_chat_contacts`, `get_chatlist_entries`,
 * `get_chatlist_items_by_entries` (docs/contract.md §4.4), `get_basic_chat_info`,
 * `get_full_chat_by_id`.
 */
import { ChatType } from "../../constants.ts";
import { type Chats, SpecialChatId } from "../../core/chats/mod.ts";
import type { Contacts } from "../../core/contacts/mod.ts";
import { ACCOUNT_PARAM, method, type MethodEntry, type ParamSpec } from "../method.ts";
import {
  type ArchiveLinkItem,
  type ChatListItem,
  type ChatListItemError,
  type FullChat,
  seenRecently,
  toBasicChat,
  toChatListItem,
} from "../types.ts";

const CHAT_ID = {
  name: "chat_id",
  type: "u32",
  description: "Chat id.",
} as const satisfies ParamSpec;

/**
 * `create_chat_by_contact_id [account_id, contact_id]` → chat id of the 1:1 chat, created when
 * missing. Creation emits `MsgsChanged{chatId:0,msgId:0}` and `ChatModified{chatId}`. Unknown
 * contact → -1 `contact N not found`; 1 (self) → -1.
 */
export const createChatByContactId = method({
  name: "create_chat_by_contact_id",
  scope: "send",
  summary: "Gets the 1:1 chat with a contact, creating it if needed.",
  params: [ACCOUNT_PARAM, { name: "contact_id", type: "u32", description: "The peer." }],
  result: { type: "u32", description: "Chat id." },
  handler: (s, [, id]) => s.core.chats.getOrCreate1to1(id).chatId,
});

/**
 * `get_chat_contacts [account_id, chat_id]` → member contact ids. A 1:1 chat gives `[1, peer]`
 * as the contract says (docs/design-decisions.md §2; Delta Chat omits 1); remove 1 to find the
 * peer. Unknown chat → -1.
 */
export const getChatContacts = method({
  name: "get_chat_contacts",
  scope: "read",
  summary: "Member contact ids of a chat, including 1 (self).",
  params: [ACCOUNT_PARAM, CHAT_ID],
  result: { type: "array<u32>", description: "Contact ids; 1:1 chats give [1, peer]." },
  handler: (s, [, id]) => s.core.chats.contactIds(id),
});

/**
 * `get_chatlist_entries [account_id, list_flags, query_string, query_contact_id]` → chat ids,
 * newest activity first. Flags (or null): 0x01 archived only, 0x02 no archive link (6).
 */
export const getChatlistEntries = method({
  name: "get_chatlist_entries",
  scope: "read",
  summary: "Chat ids for the chat list, newest activity first.",
  params: [
    ACCOUNT_PARAM,
    { name: "list_flags", type: "u32?", description: "null, or 0x01 archived only | 0x02 …" },
    { name: "query_string", type: "string?", description: "Substring of the chat name, or null." },
    { name: "query_contact_id", type: "u32?", description: "Only chats with this contact." },
  ],
  result: { type: "array<u32>", description: "Chat ids." },
  handler: (s, [, flags, query, contactId]) =>
    s.core.chats.listEntries({
      flags,
      query,
      contactId,
    }),
});

type ChatListResult = ChatListItem | ArchiveLinkItem | ChatListItemError;

function chatListItem(chats: Chats, contacts: Contacts, id: number): ChatListResult {
  if (id === SpecialChatId.ARCHIVED_LINK) {
    return { kind: "ArchiveLink", freshMessageCounter: chats.archivedFreshCount() };
  }
  const summary = chats.summary(id);
  if (summary === undefined) return { kind: "Error", id, error: `chat ${id} not found` };
  const peer = summary.dmContactId === null ? undefined : contacts.details(summary.dmContactId);
  return toChatListItem(
    summary,
    peer,
    chats.selfInChat(summary.chat),
    Date.now(),
    chats.avatarPath(summary.chat),
  );
}

/**
 * `get_chatlist_items_by_entries [account_id, chat_ids]` → map from chat id (string) to
 * `{kind:"ChatListItem", id, name, chatType (100/120/130), freshMessageCounter, lastUpdated,
 * summaryText1, summaryText2, lastMessageId, dmChatContact, …}`; 6 → `{kind:"ArchiveLink"}`;
 * an unknown id → `{kind:"Error", id, error}` (the call itself succeeds).
 */
export const getChatlistItemsByEntries = method({
  name: "get_chatlist_items_by_entries",
  scope: "read",
  summary: "Chat list items for chat ids, keyed by id.",
  params: [ACCOUNT_PARAM, { name: "chat_ids", type: "array<u32>", description: "Chat ids." }],
  result: { type: "map<string,object>", description: "Chat id → ChatListItem or Error." },
  handler(s, [, ids]) {
    const { chats, contacts } = s.core;
    const out: Record<string, ChatListResult> = {};
    for (const id of ids) out[String(id)] = chatListItem(chats, contacts, id);
    return out;
  },
});

/** `get_basic_chat_info [account_id, chat_id]` → BasicChat. Unknown chat → -1. */
export const getBasicChatInfo = method({
  name: "get_basic_chat_info",
  scope: "read",
  summary: "Basic facts of a chat: name, type, flags.",
  params: [ACCOUNT_PARAM, CHAT_ID],
  result: { type: "object", description: "BasicChat {id, name, chatType, isEncrypted, …}" },
  handler(s, [, id]) {
    const { chats, contacts } = s.core;
    const chat = chats.require(id);
    const peer = chat.type === ChatType.SINGLE ? contacts.details(chat.contactId) : undefined;
    return toBasicChat(chat, chats.nameOf(chat), peer, chats.avatarPath(chat));
  },
});

/**
 * `get_full_chat_by_id [account_id, chat_id]` → FullChat: BasicChat plus `contactIds`
 * (Delta Chat's: a 1:1 chat gives `[peer]`), `freshMessageCounter`, `selfInGroup`, `canSend`, ….
 */
export const getFullChatById = method({
  name: "get_full_chat_by_id",
  scope: "read",
  summary: "Everything about a chat, with its member ids.",
  params: [ACCOUNT_PARAM, CHAT_ID],
  result: { type: "object", description: "FullChat {…BasicChat, contactIds, freshMessageCounter}" },
  handler(s, [, id]): FullChat {
    const { chats, contacts } = s.core;
    chats.require(id);
    const summary = chats.summary(id)!;
    const peer = summary.dmContactId === null ? undefined : contacts.details(summary.dmContactId);
    const selfIn = chats.selfInChat(summary.chat);
    return {
      ...toBasicChat(summary.chat, summary.name, peer, chats.avatarPath(summary.chat)),
      contactIds: chats.memberIds(summary.chat.id),
      pastContactIds: chats.pastMemberIds(summary.chat.id),
      freshMessageCounter: summary.freshCount,
      selfInGroup: selfIn,
      canSend: chats.canSend(summary.chat),
      ephemeralTimer: summary.chat.ephemeralTimer,
      wasSeenRecently: peer !== undefined && seenRecently(peer.lastSeen),
      mailingListAddress: null,
    };
  },
});

/**
 * `get_chat_ephemeral_timer [account_id, chat_id]` → seconds after which messages of the chat
 * disappear, as its peer set it (0: off). Our messages to the chat carry the same value.
 */
export const getChatEphemeralTimer = method({
  name: "get_chat_ephemeral_timer",
  scope: "read",
  summary: "The chat's disappearing-messages timer in seconds as its peer set it (0: off).",
  params: [ACCOUNT_PARAM, CHAT_ID],
  result: { type: "u32", description: "Seconds; 0 when off." },
  handler: (s, [, id]) => s.core.chats.require(id).ephemeralTimer,
});

/** The chat methods, in documentation order. */
export const CHAT_METHODS: readonly MethodEntry[] = [
  createChatByContactId,
  getChatContacts,
  getChatlistEntries,
  getChatlistItemsByEntries,
  getBasicChatInfo,
  getFullChatById,
  getChatEphemeralTimer,
];
