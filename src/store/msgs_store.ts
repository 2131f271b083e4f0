/**
 * Rows of the `msgs` table: chat messages in and out, with their file, delivery state and the
 * links used for dedup (Message-ID) and Delta Chat's pre/post-message merge. Ids start at 10.
 */
import { DownloadState, Viewtype } from "../protocol.ts";
import type { Db, SqlValue } from "./db.ts";

/** One message as stored. Timestamps are Unix seconds. */
export interface MessageRecord {
  readonly id: number;
  /** Message-ID without angle brackets; '' when unknown. Unique when set. */
  readonly rfc724Mid: string;
  readonly chatId: number;
  /** Sender contact id; 1 = sent by this account. */
  readonly fromId: number;
  readonly text: string;
  /** Sort timestamp. */
  readonly timestamp: number;
  /** `MessageState` (docs/contract.md §3.1 numbering). */
  readonly state: number;
  readonly subject: string;
  /** The sender's Date header; 0 when unknown. */
  readonly timestampSent: number;
  /** When this device stored it. */
  readonly timestampRcvd: number;
  /** Delta Chat viewtype name: Text, File, Image, … */
  readonly viewtype: string;
  /** Blob file name inside the blob directory; '' when there is no file (yet). */
  readonly file: string;
  /** The file's original name. */
  readonly fileName: string;
  readonly fileMime: string;
  readonly fileBytes: number;
  /** Not shown in chats (SecureJoin steps, system messages). */
  readonly hidden: boolean;
  /** An info message shown centered (e.g. "Messages are end-to-end encrypted."). */
  readonly isInfo: boolean;
  /** The sender asked for a read receipt (Chat-Disposition-Notification-To). */
  readonly mdnRequested: boolean;
  /** Last send or receive error; '' when none. */
  readonly error: string;
  /** Message-ID this one replies to; '' when none. */
  readonly inReplyTo: string;
  /** On a pre-message: the Message-ID of the post-message that carries the file. */
  readonly postMessageId: string;
  /** Delta Chat DownloadState name: Done, Available, Failure, Undecipherable, InProgress. */
  readonly downloadState: string;
  /** Upper-case fingerprint of the signing key; '' for outgoing or unsigned. */
  readonly fromFingerprint: string;
  /** The sender changed the text after sending it (Delta Chat's `Chat-Edit`). */
  readonly edited: boolean;
  /** The quote a reply carried above its text (without the `> `); '' for none. */
  readonly quote: string;
  /** Delta Chat's `SystemMessage` name of an info message from a peer; '' for others. */
  readonly systemType: string;
}

/** A message to insert: everything but the id; omitted fields take the column defaults. */
export type NewMessage =
  & Pick<MessageRecord, "chatId" | "fromId" | "state" | "timestamp">
  & Partial<Omit<MessageRecord, "id" | "chatId" | "fromId" | "state" | "timestamp">>;

/** The file columns, set together. */
export type MessageFile = Pick<
  MessageRecord,
  "file" | "fileName" | "fileMime" | "fileBytes" | "viewtype" | "downloadState"
>;

/** Id and sort timestamp, for chat listings and day markers. */
export interface MessageStamp {
  readonly id: number;
  readonly timestamp: number;
}

/** Record field ↔ column, in insert order. */
const FIELDS: readonly (readonly [keyof MessageRecord, string])[] = [
  ["rfc724Mid", "rfc724_mid"],
  ["chatId", "chat_id"],
  ["fromId", "from_id"],
  ["text", "text"],
  ["timestamp", "timestamp"],
  ["state", "state"],
  ["subject", "subject"],
  ["timestampSent", "timestamp_sent"],
  ["timestampRcvd", "timestamp_rcvd"],
  ["viewtype", "viewtype"],
  ["file", "file"],
  ["fileName", "file_name"],
  ["fileMime", "file_mime"],
  ["fileBytes", "file_bytes"],
  ["hidden", "hidden"],
  ["isInfo", "is_info"],
  ["mdnRequested", "mdn_requested"],
  ["error", "error"],
  ["inReplyTo", "in_reply_to"],
  ["postMessageId", "post_message_id"],
  ["downloadState", "download_state"],
  ["fromFingerprint", "from_fingerprint"],
  ["edited", "edited"],
  ["quote", "quote"],
  ["systemType", "system_type"],
];
const BOOLEAN = new Set<keyof MessageRecord>(["hidden", "isInfo", "mdnRequested", "edited"]);
/** Values of omitted fields (the column defaults; inserts name every column). */
const DEFAULTS: Partial<Record<keyof MessageRecord, SqlValue>> = {
  rfc724Mid: "",
  text: "",
  subject: "",
  timestampSent: 0,
  timestampRcvd: 0,
  viewtype: Viewtype.TEXT,
  file: "",
  fileName: "",
  fileMime: "",
  fileBytes: 0,
  hidden: 0,
  isInfo: 0,
  mdnRequested: 0,
  error: "",
  inReplyTo: "",
  postMessageId: "",
  downloadState: DownloadState.DONE,
  fromFingerprint: "",
  edited: 0,
  quote: "",
  systemType: "",
};

const SELECT = `SELECT id, ${FIELDS.map(([, c]) => c).join(", ")} FROM msgs`;
const INSERT = `INSERT INTO msgs (${FIELDS.map(([, c]) => c).join(", ")}) VALUES (${
  FIELDS.map(() => "?").join(", ")
})`;

function toRecord(row: Record<string, unknown> | undefined): MessageRecord | undefined {
  if (row === undefined) return undefined;
  const out: Record<string, unknown> = { id: row.id };
  for (const [field, column] of FIELDS) {
    out[field] = BOOLEAN.has(field) ? row[column] !== 0 : row[column];
  }
  return out as unknown as MessageRecord;
}

function toValue(field: keyof MessageRecord, value: unknown): SqlValue {
  if (value === undefined) return DEFAULTS[field] ?? null;
  if (typeof value === "boolean") return value ? 1 : 0;
  return value as SqlValue;
}

/** Reads and writes rows of the `msgs` table. */
export class MsgsStore {
  constructor(private readonly db: Db) {}

  /**
   * Who sent message `id`, its chat and its file (blob name, or ""), or undefined: three columns
   * instead of the whole row, for the viewer's per-request lookup.
   */
  fileOf(id: number): Pick<MessageRecord, "fromId" | "chatId" | "file"> | undefined {
    const r = this.db.get<{ from_id: number; chat_id: number; file: string }>(
      "SELECT from_id, chat_id, file FROM msgs WHERE id = ?",
      id,
    );
    return r && { fromId: r.from_id, chatId: r.chat_id, file: r.file };
  }

  /** The message with this id, or undefined. */
  get(id: number): MessageRecord | undefined {
    return toRecord(this.db.get(`${SELECT} WHERE id = ?`, id));
  }

  /** The message with this Message-ID (no angle brackets), or undefined. */
  byRfc724Mid(mid: string): MessageRecord | undefined {
    if (mid === "") return undefined;
    return toRecord(this.db.get(`${SELECT} WHERE rfc724_mid = ?`, mid));
  }

  /** The pre-message that announced the post-message `mid`, or undefined. */
  byPostMessageId(mid: string): MessageRecord | undefined {
    if (mid === "") return undefined;
    return toRecord(this.db.get(`${SELECT} WHERE post_message_id = ? ORDER BY id LIMIT 1`, mid));
  }

  /** Inserts a message and returns its id (≥ 10). Throws on a duplicate Message-ID. */
  insert(m: NewMessage): number {
    const record = m as Partial<MessageRecord>;
    const values = FIELDS.map(([field]) => toValue(field, record[field]));
    return this.db.run(INSERT, ...values).lastId;
  }

  /** Sets the file columns (a post-message completing its pre-message, or the reverse). */
  setFile(id: number, f: MessageFile): void {
    this.db.run(
      "UPDATE msgs SET file = ?, file_name = ?, file_mime = ?, file_bytes = ?, viewtype = ?, " +
        "download_state = ? WHERE id = ?",
      f.file,
      f.fileName,
      f.fileMime,
      f.fileBytes,
      f.viewtype,
      f.downloadState,
      id,
    );
  }

  /** Replaces the text of a message its sender edited, and marks it edited. */
  editText(id: number, text: string): void {
    this.db.run("UPDATE msgs SET text = ?, edited = 1 WHERE id = ?", text, id);
  }

  /** Sets the text (and subject) of a message whose text was empty. */
  setText(id: number, text: string, subject: string): void {
    this.db.run("UPDATE msgs SET text = ?, subject = ? WHERE id = ?", text, subject, id);
  }

  /**
   * Moves the state to `to` only when it is currently one of `from`; returns true when it moved.
   * This is how every transition stays forward-only.
   */
  moveState(id: number, to: number, from: readonly number[]): boolean {
    if (from.length === 0) return false;
    const list = from.map(() => "?").join(", ");
    return this.db.run(
      `UPDATE msgs SET state = ? WHERE id = ? AND state IN (${list})`,
      to,
      id,
      ...from,
    ).changes > 0;
  }

  /**
   * Our messages waiting for a SecureJoin handshake (state 10, not rendered: no Message-ID),
   * oldest first; of one chat, or of all chats.
   */
  waitingForJoin(chatId?: number): MessageRecord[] {
    const where = `${SELECT} WHERE from_id = 1 AND state = 10 AND rfc724_mid = '' AND hidden = 0`;
    const rows = chatId === undefined
      ? this.db.all<Record<string, unknown>>(`${where} ORDER BY id`)
      : this.db.all<Record<string, unknown>>(`${where} AND chat_id = ? ORDER BY id`, chatId);
    return rows.map((r) => toRecord(r)!);
  }

  /**
   * Gives a waiting message the Message-ID and Subject of the mail rendered for it; false when it
   * is no longer waiting (rendered by someone else, failed or deleted).
   */
  setRendered(id: number, rfc724Mid: string, subject: string): boolean {
    return this.db.run(
      "UPDATE msgs SET rfc724_mid = ?, subject = ? WHERE id = ? AND rfc724_mid = '' AND state = 10",
      rfc724Mid,
      subject,
      id,
    ).changes > 0;
  }

  /** Records an error text. */
  setError(id: number, error: string): void {
    this.db.run("UPDATE msgs SET error = ? WHERE id = ?", error, id);
  }

  /** Visible messages of a chat (optionally info messages only), oldest first. */
  stampsOfChat(chatId: number, infoOnly = false): MessageStamp[] {
    const info = infoOnly ? "AND is_info = 1" : "";
    return this.db.all<MessageStamp>(
      `SELECT id, timestamp FROM msgs WHERE chat_id = ? AND hidden = 0 ${info}
       ORDER BY timestamp, id`,
      chatId,
    );
  }

  /** The newest visible message of a chat, or undefined. */
  lastOfChat(chatId: number): MessageRecord | undefined {
    return toRecord(this.db.get(
      `${SELECT} WHERE chat_id = ? AND hidden = 0 ORDER BY timestamp DESC, id DESC LIMIT 1`,
      chatId,
    ));
  }

  /** Ids of fresh (state 1) visible messages of all chats, newest first. */
  freshIds(): number[] {
    return this.db.all<{ id: number }>(
      "SELECT id FROM msgs WHERE state = 1 AND hidden = 0 AND chat_id >= 10 " +
        "ORDER BY timestamp DESC, id DESC",
    ).map((r) => r.id);
  }

  /** Deletes a message (its receipts cascade); returns true when it existed. */
  delete(id: number): boolean {
    return this.db.run("DELETE FROM msgs WHERE id = ?", id).changes > 0;
  }

  /** Number of messages that use this blob file. */
  fileRefs(file: string): number {
    if (file === "") return 0;
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM msgs WHERE file = ?", file)?.n ??
      0;
  }
}
