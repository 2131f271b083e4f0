/**
 * Storing one received chat message: dedup by Message-ID and the merge of Delta Chat's
 * pre-message (text + file metadata, `Chat-Post-Message-ID`) with its post-message (the file),
 * in whichever order they arrive. Synchronous, so the reception pipeline can group it with the
 * contact update in one `DomainTx.run`.
 */
import { ContactId, MessageState } from "../../constants.ts";
import { DownloadState, Viewtype } from "../../protocol.ts";
import type { MessageRecord } from "../../store/mod.ts";
import type { BlobFile } from "../blobs.ts";
import type { CoreContext, Emit } from "../context.ts";
import { nowSeconds } from "../context.ts";

/** A received message, as the reception pipeline parsed it. */
export interface IncomingMessage {
  /** Message-ID without angle brackets (required: it is the dedup key). */
  readonly rfc724Mid: string;
  readonly chatId: number;
  /** Sender contact id (1 for our own messages from another device). */
  readonly fromId: number;
  readonly text: string;
  readonly subject?: string;
  /** Unix seconds of the Date header; 0 when missing. */
  readonly timestampSent: number;
  /** Unix seconds when received; default now. */
  readonly timestampRcvd?: number;
  /** Default: File with a file, else Text. */
  readonly viewtype?: string | undefined;
  /** The attachment, already written with `writeBlob`. */
  readonly file?: BlobFile | undefined;
  /** On a pre-message: the file announced by `Chat-Post-Message-Metadata`, still to come. */
  readonly announcedFile?: {
    readonly name: string;
    readonly bytes: number;
    readonly viewtype?: string;
    readonly mime?: string;
  } | undefined;
  /** On a pre-message: `Chat-Post-Message-ID` (no angle brackets). */
  readonly postMessageId?: string | undefined;
  readonly fromFingerprint?: string | undefined;
  /** The sender asked for a read receipt (Chat-Disposition-Notification-To = From). */
  readonly mdnRequested?: boolean;
  readonly inReplyTo?: string;
  /** The quote a reply carried above its text (see `chat_text.ts`). */
  readonly quote?: string;
  /** Not shown in chats (SecureJoin steps, system messages). */
  readonly hidden?: boolean;
  readonly isInfo?: boolean;
  /** Delta Chat's name of the system message (with `isInfo`). */
  readonly systemType?: string | undefined;
  /** Default 1 (fresh); e.g. 26 for our own message synced from another device. */
  readonly state?: number;
}

/**
 * What happened: `created` (a new row), `duplicate` (already stored: nothing changed) or
 * `merged` (a pre- or post-message completed the row `msgId`).
 */
export interface StoreIncomingResult {
  readonly msgId: number;
  readonly outcome: "created" | "duplicate" | "merged";
}

/**
 * Stores `m` (the chat must exist). Events after the commit: `IncomingMsg{chatId,msgId}` for a
 * new visible fresh message from a peer; `MsgsChanged{chatId,msgId}` for a new info or own
 * message and for a merge; nothing for duplicates and hidden messages.
 */
export function storeIncoming(ctx: CoreContext, m: IncomingMessage): StoreIncomingResult {
  return ctx.tx.run((emit) => {
    const msgs = ctx.store.msgs;
    const same = msgs.byRfc724Mid(m.rfc724Mid);
    if (same !== undefined) return { msgId: same.id, outcome: "duplicate" };
    const pre = msgs.byPostMessageId(m.rfc724Mid);
    if (pre !== undefined) return completePreMessage(ctx, pre, m, emit);
    const post = m.postMessageId ? msgs.byRfc724Mid(m.postMessageId) : undefined;
    if (post !== undefined) return addPreMessageText(ctx, post, m, emit);
    return insertNew(ctx, m, emit);
  });
}

/** The post-message arrived after its pre-message: the pre-message's row gets the file. */
function completePreMessage(
  ctx: CoreContext,
  pre: MessageRecord,
  m: IncomingMessage,
  emit: Emit,
): StoreIncomingResult {
  if (pre.file !== "" || m.file === undefined) return { msgId: pre.id, outcome: "duplicate" };
  ctx.store.msgs.setFile(pre.id, {
    file: m.file.blob,
    fileName: m.file.name,
    fileMime: m.file.mime,
    fileBytes: m.file.bytes,
    viewtype: m.viewtype ?? (pre.viewtype === Viewtype.TEXT ? Viewtype.FILE : pre.viewtype),
    downloadState: DownloadState.DONE,
  });
  if (pre.text === "" && m.text !== "") ctx.store.msgs.setText(pre.id, m.text, m.subject ?? "");
  if (!pre.hidden) emit({ kind: "MsgsChanged", chatId: pre.chatId, msgId: pre.id });
  return { msgId: pre.id, outcome: "merged" };
}

/** The pre-message arrived after its post-message: at most its text completes the row. */
function addPreMessageText(
  ctx: CoreContext,
  post: MessageRecord,
  m: IncomingMessage,
  emit: Emit,
): StoreIncomingResult {
  if (post.text !== "" || m.text === "") return { msgId: post.id, outcome: "duplicate" };
  ctx.store.msgs.setText(post.id, m.text, m.subject ?? post.subject);
  if (!post.hidden) emit({ kind: "MsgsChanged", chatId: post.chatId, msgId: post.id });
  return { msgId: post.id, outcome: "merged" };
}

function fileColumns(m: IncomingMessage) {
  if (m.file !== undefined) {
    return {
      file: m.file.blob,
      fileName: m.file.name,
      fileMime: m.file.mime,
      fileBytes: m.file.bytes,
      viewtype: m.viewtype ?? Viewtype.FILE,
      downloadState: DownloadState.DONE,
    };
  }
  const a = m.announcedFile;
  if (a !== undefined) {
    return {
      fileName: a.name,
      fileMime: a.mime ?? "",
      fileBytes: a.bytes,
      viewtype: m.viewtype ?? a.viewtype ?? Viewtype.FILE,
      downloadState: DownloadState.AVAILABLE,
    };
  }
  return { viewtype: m.viewtype ?? Viewtype.TEXT };
}

function insertNew(ctx: CoreContext, m: IncomingMessage, emit: Emit): StoreIncomingResult {
  const rcvd = m.timestampRcvd ?? nowSeconds(ctx);
  const state = m.state ?? MessageState.FRESH;
  const msgId = ctx.store.msgs.insert({
    rfc724Mid: m.rfc724Mid,
    chatId: m.chatId,
    fromId: m.fromId,
    text: m.text,
    // A sender clock in the future must not pin the message to the bottom of the chat.
    timestamp: Math.min(m.timestampSent || rcvd, rcvd),
    state,
    subject: m.subject ?? "",
    timestampSent: m.timestampSent,
    timestampRcvd: rcvd,
    ...fileColumns(m),
    hidden: m.hidden === true,
    isInfo: m.isInfo === true,
    systemType: m.systemType ?? "",
    mdnRequested: m.mdnRequested === true,
    inReplyTo: m.inReplyTo ?? "",
    quote: m.quote ?? "",
    postMessageId: m.postMessageId ?? "",
    fromFingerprint: m.fromFingerprint ?? "",
  });
  if (m.fromId > ContactId.LAST_SPECIAL && m.timestampSent > 0) {
    ctx.store.contacts.touch(m.fromId, Math.min(m.timestampSent, rcvd));
  }
  if (m.hidden === true) return { msgId, outcome: "created" };
  const incoming = m.fromId !== ContactId.SELF && state === MessageState.FRESH && !m.isInfo;
  emit({ kind: incoming ? "IncomingMsg" : "MsgsChanged", chatId: m.chatId, msgId });
  return { msgId, outcome: "created" };
}
