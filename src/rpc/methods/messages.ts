/**
 * Message RPC methods: `send_msg`, `get_message_ids`, `get_messages` (docs/contract.md §4.4) and
 * Delta Chat's
 * `get_message`, `markseen_msgs`, `get_fresh_msgs`, `delete_messages`.
 */
import { attachmentRoots, type FileUse, openAttachableFile } from "../../core/file_access.ts";
import { Viewtype } from "../../core/messages.ts";
import { InvalidParamsError, NotFoundError } from "../../errors.ts";
import { ACCOUNT_PARAM, type MethodEntry, type ParamSpec } from "../method.ts";
import { describeJson, matchesType } from "../params.ts";
import { type MessageLoadError, type MessageObject, toMessageObject } from "../types.ts";

const MESSAGE_IDS: ParamSpec = {
  name: "message_ids",
  type: "array<u32>",
  description: "Message ids.",
};

/** `MessageData` fields Delta Chat has and this gateway does not send. */
const UNSUPPORTED = ["html", "location", "quotedText", "overrideSenderName"];
const VIEWTYPES: readonly string[] = Object.values(Viewtype);

/** `send_msg`'s third parameter, validated. */
export interface MessageData {
  readonly text: string;
  readonly file?: string;
  readonly filename?: string;
  readonly viewtype: Viewtype;
  /** A message to quote (Delta Chat's `quotedMessageId`). */
  readonly quotedMessageId?: number;
}

function optionalString(data: Record<string, unknown>, key: string): string | undefined {
  const v = data[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") {
    throw new InvalidParamsError(`MessageData.${key} must be a string, got ${describeJson(v)}`);
  }
  return v;
}

/**
 * Checks `MessageData {text?, file?, filename?, viewtype?, quotedMessageId?}`: wrong types, an unknown viewtype,
 * an empty message or a viewtype that contradicts `file` → -32602. `viewtype` defaults to File
 * with a file, else Text. The file itself is checked when it is opened (`openAttachableFile`).
 */
export function parseMessageData(value: Record<string, unknown>): MessageData {
  for (const key of UNSUPPORTED) {
    if (value[key] !== undefined && value[key] !== null) {
      throw new InvalidParamsError(`MessageData.${key} is not supported by this gateway`);
    }
  }
  const text = optionalString(value, "text") ?? "";
  const file = optionalString(value, "file");
  const filename = optionalString(value, "filename");
  const given = optionalString(value, "viewtype");
  if (given !== undefined && !VIEWTYPES.includes(given)) {
    throw new InvalidParamsError(
      `MessageData.viewtype "${given}" is not a viewtype; use one of ${VIEWTYPES.join(", ")}`,
    );
  }
  const viewtype = (given ?? (file === undefined ? Viewtype.TEXT : Viewtype.FILE)) as Viewtype;
  if (file === undefined && text === "") {
    throw new InvalidParamsError('the message is empty: MessageData needs "text" or "file"');
  }
  if (file === undefined && viewtype !== Viewtype.TEXT) {
    throw new InvalidParamsError(`MessageData.viewtype "${viewtype}" needs a "file"`);
  }
  if (file !== undefined && viewtype === Viewtype.TEXT) {
    throw new InvalidParamsError('MessageData.viewtype "Text" cannot carry a "file"');
  }
  const quoted = value.quotedMessageId;
  if (quoted !== undefined && quoted !== null && !matchesType("u32", quoted)) {
    throw new InvalidParamsError(
      `MessageData.quotedMessageId must be a message id (u32), got ${describeJson(quoted)}`,
    );
  }
  const quotedMessageId = quoted === undefined || quoted === null ? undefined : quoted as number;
  return { text, file, filename, viewtype, quotedMessageId };
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
export const sendMsg: MethodEntry = {
  name: "send_msg",
  summary: "Sends a text or file message to a chat.",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32", description: "Chat to send to." },
    {
      name: "message_data",
      type: "object",
      description: 'MessageData {text?, file?, viewtype?: "Text"|"File"|…, filename?}',
    },
  ],
  result: { type: "u32", description: "Id of the new message." },
  async handler(s, [, chatId, data]) {
    const m = parseMessageData(data as Record<string, unknown>);
    s.core.chats.require(chatId as number);
    await using file = m.file === undefined
      ? undefined
      : await openAttachableFile(m.file, attachmentRoots(s.config), SEND_USE);
    return await s.core.sendMessage({
      chatId: chatId as number,
      text: m.text,
      viewtype: m.viewtype,
      file: file === undefined ? undefined : { source: file, name: m.filename },
      quotedMessageId: m.quotedMessageId,
    });
  },
};

/**
 * `get_message_ids [account_id, chat_id, info_only, add_daymarker]` → visible message ids,
 * oldest first. `info_only`: info messages only; `add_daymarker`: 9 before each new UTC day.
 * Unknown chat → -1.
 */
export const getMessageIds: MethodEntry = {
  name: "get_message_ids",
  summary: "Message ids of a chat, oldest first (9 = day marker when asked).",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32", description: "Chat id." },
    { name: "info_only", type: "bool", description: "Only info messages (use false)." },
    { name: "add_daymarker", type: "bool", description: "Insert 9 before each new day." },
  ],
  result: { type: "array<u32>", description: "Message ids." },
  handler: (s, [, chatId, infoOnly, dayMarkers]) =>
    s.core.messages.idsOfChat(chatId as number, {
      infoOnly: infoOnly as boolean,
      dayMarkers: dayMarkers as boolean,
    }),
};

/**
 * `get_messages [account_id, message_ids]` → map from id (string) to message object
 * (`{kind:"message", id, chatId, fromId, text, timestamp, state, file, fileBytes, viewtype,
 * viewType, sender, …}`); an unknown id → `{kind:"loadingError", error:"message N not found"}`.
 */
export const getMessages: MethodEntry = {
  name: "get_messages",
  summary: "Message objects for message ids, keyed by id.",
  params: [ACCOUNT_PARAM, MESSAGE_IDS],
  result: { type: "map<string,object>", description: "Message id → message or loadingError." },
  handler(s, [, ids]) {
    const messages = s.core.messages;
    const out: Record<string, MessageObject | MessageLoadError> = {};
    for (const id of ids as number[]) {
      const d = messages.details(id);
      out[String(id)] = d === undefined
        ? { kind: "loadingError", error: `message ${id} not found` }
        : toMessageObject(d);
    }
    return out;
  },
};

/** `get_message [account_id, message_id]` → message object. Unknown id → -1. */
export const getMessage: MethodEntry = {
  name: "get_message",
  summary: "One message object.",
  params: [ACCOUNT_PARAM, { name: "message_id", type: "u32", description: "Message id." }],
  result: { type: "object", description: "Message {id, chatId, fromId, text, state, …}" },
  handler(s, [, id]) {
    const d = s.core.messages.details(id as number);
    if (d === undefined) throw new NotFoundError(`message ${id} not found`);
    return toMessageObject(d);
  },
};

/**
 * `markseen_msgs [account_id, message_ids]` → nothing (HTTP 204). Fresh incoming messages
 * become seen (1 → 16); `MsgsNoticed{chatId}` per chat; a read receipt is owed, in the same
 * transaction, to each sender who asked for one (while the mail transport runs) and sent by the
 * receipt batcher. Unknown or outgoing ids are skipped.
 */
export const markseenMsgs: MethodEntry = {
  name: "markseen_msgs",
  summary: "Marks incoming messages as seen and sends the read receipts asked for.",
  params: [ACCOUNT_PARAM, MESSAGE_IDS],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, ids]) => s.core.markSeen(ids as number[]),
};

/** `get_fresh_msgs [account_id]` → ids of fresh incoming messages of all chats, newest first. */
export const getFreshMsgs: MethodEntry = {
  name: "get_fresh_msgs",
  summary: "Ids of unread incoming messages, newest first.",
  params: [ACCOUNT_PARAM],
  result: { type: "array<u32>", description: "Message ids." },
  handler: (s) => s.core.messages.freshIds(),
};

/**
 * `delete_messages [account_id, message_ids]` → nothing (HTTP 204). Removes the messages on this
 * device, their queued mails and blob files no other message uses; `MsgDeleted{chatId,msgId}`
 * each. Any unknown id → -1 and nothing is deleted.
 */
export const deleteMessages: MethodEntry = {
  name: "delete_messages",
  summary: "Deletes messages (and their files) on this device.",
  params: [ACCOUNT_PARAM, MESSAGE_IDS],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, ids]) => s.core.messages.delete(ids as number[]),
};

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
