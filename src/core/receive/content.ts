/**
 * What a received chat mail carries: its text, its file, Delta Chat's pre-/post-message fields
 * (docs/protocol-notes.md §4, §5) and receipts (MDN reports). Pure: a parsed MIME tree in, values
 * out.
 */
import { leaves, type MimePart, partText, type SpooledBody } from "../../mime/parser.ts";
import { CHAT_CONTENT_SYSTEM, Header, SystemMessage, Viewtype } from "../../protocol.ts";
import { simplifyText } from "./text.ts";
import type { ReadMail } from "./mail_reader.ts";
import { stripAngles } from "./mail_reader.ts";

/** A file found in a mail. */
export interface MailFile {
  readonly name: string;
  readonly mime: string;
  /** The file's bytes (empty when it was spooled). */
  readonly bytes: Uint8Array;
  /** Where a large mail's file waits, written while it streamed in (see blobs.ts). */
  readonly spooled?: SpooledBody;
}

/** The chat content of a mail; a field the mail does not have is undefined. */
export interface ChatContent {
  readonly text: string;
  /** The quote above the text of a reply ('' for none). */
  readonly quote: string;
  /** Delta Chat's `SystemMessage` name when the mail is a system (info) message, not user text. */
  readonly systemType: string | undefined;
  readonly file: MailFile | undefined;
  readonly viewtype: string | undefined;
  /** On a pre-message: the Message-ID of the post-message with the file. */
  readonly postMessageId: string | undefined;
  readonly announcedFile:
    | { name: string; bytes: number; viewtype?: string; mime?: string }
    | undefined;
}

/** A receipt: which of our messages, and whether read (`displayed`) or stored (`processed`). */
export interface ReceiptContent {
  readonly messageIds: readonly string[];
  readonly disposition: "displayed" | "processed" | "other";
}

/** Whether a leaf is a file (reception takes the first one as the message's file). */
export function isAttachment(p: Pick<MimePart, "contentType" | "disposition">): boolean {
  if (p.disposition?.value === "attachment") return true;
  const type = p.contentType.value;
  return !type.startsWith("text/") && !type.startsWith("multipart/") &&
    type !== "message/disposition-notification";
}

function fileNameOf(p: MimePart): string {
  const name = p.disposition?.params.filename ?? p.contentType.params.name ?? "";
  const base = [...name.replace(/^.*[\\/]/, "")].filter((c) => c.charCodeAt(0) >= 0x20).join("")
    .trim();
  return base === "" ? "file.bin" : base.slice(0, 200);
}

/** Delta Chat viewtype for a received file's MIME type. */
export function viewtypeOfMime(mime: string, voice = false): string {
  if (mime === "image/gif") return Viewtype.GIF;
  if (mime.startsWith("image/")) return Viewtype.IMAGE;
  if (mime.startsWith("audio/")) return voice ? Viewtype.VOICE : Viewtype.AUDIO;
  if (mime.startsWith("video/")) return Viewtype.VIDEO;
  return Viewtype.FILE;
}

function metadata(value: string | undefined): ChatContent["announcedFile"] {
  if (value === undefined) return undefined;
  try {
    const m = JSON.parse(value) as Record<string, unknown>;
    const name = typeof m.filename === "string" ? m.filename : "file.bin";
    const bytes = typeof m.size === "number" && m.size >= 0 ? Math.floor(m.size) : 0;
    return { name, bytes, ...(typeof m.viewtype === "string" ? { viewtype: m.viewtype } : {}) };
  } catch {
    return undefined;
  }
}

/** Group-change headers that make a mail a system message (mimeparser.rs). */
const SYSTEM_HEADERS: readonly [string, SystemMessage][] = [
  [Header.CHAT_GROUP_MEMBER_REMOVED, SystemMessage.MEMBER_REMOVED],
  [Header.CHAT_GROUP_MEMBER_ADDED, SystemMessage.MEMBER_ADDED],
  [Header.CHAT_GROUP_NAME_CHANGED, SystemMessage.GROUP_NAME_CHANGED],
  [Header.CHAT_GROUP_DESCRIPTION_CHANGED, SystemMessage.GROUP_DESCRIPTION_CHANGED],
];

/** The system message a chat mail is, or undefined for user content. */
export function systemTypeOf(mail: ReadMail): SystemMessage | undefined {
  const content = mail.headers.get(Header.CHAT_CONTENT)?.trim().toLowerCase() ?? "";
  if (Object.hasOwn(CHAT_CONTENT_SYSTEM, content)) return CHAT_CONTENT_SYSTEM[content];
  return SYSTEM_HEADERS.find(([h]) => mail.headers.get(h) !== undefined)?.[1];
}

/** Text, file and pre/post-message fields of a chat mail. */
export function chatContent(mail: ReadMail): ChatContent {
  const all = leaves(mail.content);
  const textPart = all.find((p) => p.contentType.value === "text/plain" && !isAttachment(p));
  const chatMessage = mail.headers.get(Header.CHAT_VERSION) !== undefined;
  const raw = textPart ? partText(textPart).replace(/\r\n/g, "\n") : "";
  const { text: simplified, quote } = simplifyText(raw, chatMessage);
  let text = simplified;
  if (!chatMessage) {
    const subject = mail.headers.get(Header.SUBJECT)?.trim() ?? "";
    if (subject !== "" && subject !== "[...]") {
      text = text === "" ? subject : `${subject} – ${text}`;
    }
  }
  const filePart = all.find(isAttachment);
  const file = filePart && {
    name: fileNameOf(filePart),
    mime: filePart.contentType.value || "application/octet-stream",
    bytes: filePart.body,
    ...(filePart.spooled === undefined ? {} : { spooled: filePart.spooled }),
  };
  const postMessageId = stripAngles(mail.headers.get(Header.CHAT_POST_MESSAGE_ID)) || undefined;
  const voice = mail.headers.get(Header.CHAT_VOICE_MESSAGE) === "1";
  return {
    text,
    quote,
    systemType: systemTypeOf(mail),
    file,
    viewtype: file ? viewtypeOfMime(file.mime, voice) : undefined,
    postMessageId,
    announcedFile: postMessageId
      ? metadata(mail.headers.get(Header.CHAT_POST_MESSAGE_METADATA))
      : undefined,
  };
}

/** The receipt in a `multipart/report` mail, or undefined when the mail is not one. */
export function receiptContent(mail: ReadMail): ReceiptContent | undefined {
  const root = mail.content;
  if (root.contentType.value !== "multipart/report") return undefined;
  const report = leaves(root).find((p) =>
    p.contentType.value === "message/disposition-notification"
  );
  if (report === undefined) return undefined;
  const fields = new Map<string, string>();
  for (const line of partText(report).replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1));
  }
  const ids = [
    stripAngles(fields.get("original-message-id")),
    ...(fields.get("additional-message-ids") ?? "").split(/\s+/).map(stripAngles),
  ].filter((id) => id !== "");
  const d = (fields.get("disposition") ?? "").split(";").pop()?.trim().toLowerCase();
  return {
    messageIds: ids.slice(0, 1000),
    disposition: d === "displayed" || d === "processed" ? d : "other",
  };
}
