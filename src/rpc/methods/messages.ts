/**
 * Message RPC methods: `send_msg`, `get_message_ids`, `get_messages` (docs/contract.md §4.4) and
 * Delta Chat's
 * `get_message`, `markseen_msgs`, `get_fresh_msgs`, `delete_messages`.
 */
import { attachmentRoots, type FileUse, openAttachableFile } from "../../core/file_access.ts";
import { Viewtype } from "../../core/chats/mod.ts";
import { InvalidParamsError, NotFoundError } from "../../errors.ts";
import {
  ACCOUNT_PARAM,
  method,
  type MethodEntry,
  type ParamSpec,
  type ParamValue,
} from "../method.ts";
import { type MessageLoadError, type MessageObject, toMessageObject } from "../types.ts";

const MESSAGE_IDS = {
  name: "message_ids",
  type: "array<u32>",
  description: "Message ids.",
} as const satisfies ParamSpec;

/** `MessageData` fields Delta Chat has and this gateway does not send. */
const UNSUPPORTED = ["html", "location", "quotedText", "overrideSenderName"];
const VIEWTYPES: readonly Viewtype[] = Object.values(Viewtype);

/**
 * `send_msg`'s third parameter, Delta Chat's `MessageData`: the fields this gateway reads, each
 * optional and nullable as in Delta Chat. Validation checks their types (and the viewtype name);
 * other fields pass it and are ignored, except the unsupported ones `parseMessageData` refuses.
 */
const MESSAGE_DATA = {
  name: "message_data",
  type: "object",
  description: 'MessageData {text?, file?, viewtype?: "Text"|"File"|…, filename?}',
  fields: {
    text: { type: "string?", optional: true, description: "The text (or a file's caption)." },
    file: {
      type: "string?",
      optional: true,
      description: "Path of a file to send: inside the files directory, or a stored blob.",
    },
    filename: {
      type: "string?",
      optional: true,
      description: "The name the recipient sees; the file's own name by default.",
    },
    viewtype: {
      type: "string?",
      optional: true,
      values: VIEWTYPES,
      description: "How to show it; File with a file, else Text, by default.",
    },
    quotedMessageId: {
      type: "u32?",
      optional: true,
      description: "A message to quote above the text.",
    },
  },
} as const satisfies ParamSpec;

/** `send_msg`'s third parameter as validation lets it through (its declared fields typed). */
export type MessageDataParam = ParamValue<typeof MESSAGE_DATA>;

/** `send_msg`'s third parameter, checked; a field sent as null or not at all is undefined. */
export interface MessageData {
  readonly text: string;
  readonly file: string | undefined;
  readonly filename: string | undefined;
  readonly viewtype: Viewtype;
  /** A message to quote (Delta Chat's `quotedMessageId`). */
  readonly quotedMessageId: number | undefined;
}

/**
 * Checks what the schema cannot: an unsupported field, an empty message or a viewtype that
 * contradicts `file` → -32602. `viewtype` defaults to File with a file, else Text; null fields
 * count as absent. The file itself is checked when it is opened (`openAttachableFile`).
 */
export function parseMessageData(value: MessageDataParam): MessageData {
  for (const key of UNSUPPORTED) {
    if (value[key] !== undefined && value[key] !== null) {
      throw new InvalidParamsError(`MessageData.${key} is not supported by this gateway`);
    }
  }
  const text = value.text ?? "";
  const file = value.file ?? undefined;
  const filename = value.filename ?? undefined;
  const viewtype = value.viewtype ?? (file === undefined ? Viewtype.TEXT : Viewtype.FILE);
  if (file === undefined && text === "") {
    throw new InvalidParamsError('the message is empty: MessageData needs "text" or "file"');
  }
  if (file === undefined && viewtype !== Viewtype.TEXT) {
    throw new InvalidParamsError(`MessageData.viewtype "${viewtype}" needs a "file"`);
  }
  if (file !== undefined && viewtype === Viewtype.TEXT) {
    throw new InvalidParamsError('MessageData.viewtype "Text" cannot carry a "file"');
  }
  return { text, file, filename, viewtype, quotedMessageId: value.quotedMessageId ?? undefined };
}

/** How send_msg names itself when it refuses a file. */
const SEND_USE: FileUse = { method: "send_msg", verb: "sent" };

/**
 * `send_msg [account_id, chat_id, MessageData]` → message id (state 10, pending).
 * `{text}` sends text; `{file, viewtype?, text?, filename?}` copies the file into the blob
 * directory and sends it: a regular file whose real path lies inside the files directory (or
 * a stored message's blob), opened once and read from that handle (`openAttachableFile`); never
 * moved or changed. The message and its outbox row are written in one transaction;
 * `MsgsChanged{chatId,msgId}` follows, then `MsgDelivered` once the relay accepted it. Errors:
 * unknown chat, a file the rules refuse (`send_msg: "/x" is not inside the files directory …`),
 * or a recipient without key → -1 and nothing is stored; bad
 * MessageData → -32602. To a contact whose SecureJoin handshake is still running (no key yet)
 * the message waits, pending, and goes out when the join completes (or fails when it times out).
 */
export const sendMsg = method({
  name: "send_msg",
  scope: "send",
  summary: "Sends a text or file message to a chat.",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32", description: "Chat to send to." },
    MESSAGE_DATA,
  ],
  result: { type: "u32", description: "Id of the new message." },
  async handler(s, [, chatId, data]) {
    const m = parseMessageData(data);
    s.core.chats.require(chatId);
    await using file = m.file === undefined
      ? undefined
      : await openAttachableFile(m.file, attachmentRoots(s.config), SEND_USE);
    return await s.core.sendMessage({
      chatId,
      text: m.text,
      viewtype: m.viewtype,
      file: file === undefined ? undefined : { source: file, name: m.filename },
      quotedMessageId: m.quotedMessageId,
    });
  },
});

/**
 * `get_message_ids [account_id, chat_id, info_only, add_daymarker]` → visible message ids,
 * oldest first. `info_only`: info messages only; `add_daymarker`: 9 before each new UTC day.
 * Unknown chat → -1.
 */
export const getMessageIds = method({
  name: "get_message_ids",
  scope: "read",
  summary: "Message ids of a chat, oldest first (9 = day marker when asked).",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32", description: "Chat id." },
    { name: "info_only", type: "bool", description: "Only info messages (use false)." },
    { name: "add_daymarker", type: "bool", description: "Insert 9 before each new day." },
  ],
  result: { type: "array<u32>", description: "Message ids." },
  handler: (s, [, chatId, infoOnly, dayMarkers]) =>
    s.core.messages.idsOfChat(chatId, {
      infoOnly,
      dayMarkers,
    }),
});

/**
 * `get_messages [account_id, message_ids]` → map from id (string) to message object
 * (`{kind:"message", id, chatId, fromId, text, timestamp, state, file, fileBytes, viewtype,
 * viewType, sender, …}`); an unknown id → `{kind:"loadingError", error:"message N not found"}`.
 */
export const getMessages = method({
  name: "get_messages",
  scope: "read",
  summary: "Message objects for message ids, keyed by id.",
  params: [ACCOUNT_PARAM, MESSAGE_IDS],
  result: { type: "map<string,object>", description: "Message id → message or loadingError." },
  handler(s, [, ids]) {
    const messages = s.core.messages;
    const out: Record<string, MessageObject | MessageLoadError> = {};
    for (const id of ids) {
      const d = messages.details(id);
      out[String(id)] = d === undefined
        ? { kind: "loadingError", error: `message ${id} not found` }
        : toMessageObject(d);
    }
    return out;
  },
});

/** `get_message [account_id, message_id]` → message object. Unknown id → -1. */
export const getMessage = method({
  name: "get_message",
  scope: "read",
  summary: "One message object.",
  params: [ACCOUNT_PARAM, { name: "message_id", type: "u32", description: "Message id." }],
  result: { type: "object", description: "Message {id, chatId, fromId, text, state, …}" },
  handler(s, [, id]) {
    const d = s.core.messages.details(id);
    if (d === undefined) throw new NotFoundError(`message ${id} not found`);
    return toMessageObject(d);
  },
});

/**
 * `markseen_msgs [account_id, message_ids]` → nothing (HTTP 204). Fresh incoming messages
 * become seen (1 → 16); `MsgsNoticed{chatId}` per chat; a read receipt is owed, in the same
 * transaction, to each sender who asked for one (while the mail transport runs) and sent by the
 * receipt batcher. Unknown or outgoing ids are skipped.
 */
export const markseenMsgs = method({
  name: "markseen_msgs",
  scope: "send",
  summary: "Marks incoming messages as seen and sends the read receipts asked for.",
  params: [ACCOUNT_PARAM, MESSAGE_IDS],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, ids]) => s.core.markSeen(ids),
});

/** `get_fresh_msgs [account_id]` → ids of fresh incoming messages of all chats, newest first. */
export const getFreshMsgs = method({
  name: "get_fresh_msgs",
  scope: "read",
  summary: "Ids of unread incoming messages, newest first.",
  params: [ACCOUNT_PARAM],
  result: { type: "array<u32>", description: "Message ids." },
  handler: (s) => s.core.messages.freshIds(),
});

/**
 * `delete_messages [account_id, message_ids]` → nothing (HTTP 204). Removes the messages on this
 * device, their queued mails and blob files no other message uses; `MsgDeleted{chatId,msgId}`
 * each. Any unknown id → -1 and nothing is deleted.
 */
export const deleteMessages = method({
  name: "delete_messages",
  scope: "send",
  summary: "Deletes messages (and their files) on this device.",
  params: [ACCOUNT_PARAM, MESSAGE_IDS],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, ids]) => s.core.messages.delete(ids),
});

/** The message methods, in documentation order. */
export const MESSAGE_METHODS: readonly MethodEntry[] = [
  sendMsg,
  getMessageIds,
  getMessages,
  getMessage,
  markseenMsgs,
  getFreshMsgs,
  deleteMessages,
];
