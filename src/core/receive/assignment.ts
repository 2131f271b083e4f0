/**
 * Chat assignment, the one place that decides which chat a received chat message belongs to
 * (Delta Chat's `decide_chat_assignment`, docs/protocol-notes.md §7.3): a channel post by its
 * `List-ID`/`Chat-List-ID` (checked first), a group by a valid `Chat-Group-ID` on encrypted and
 * signed mail, else the 1:1 chat with the sender. Pure: the read mail in, the decision out.
 */
import { decodeEncodedWords } from "../../mime/parser.ts";
import { Header } from "../../protocol.ts";
import type { ReadMail } from "./mail_reader.ts";

/** Where a received chat message goes. */
export type ChatAssignment =
  /** The 1:1 chat with the signer. */
  | { readonly kind: "single" }
  /** The group with this id (created from the mail when unknown and allowed). */
  | { readonly kind: "group"; readonly grpid: string; readonly name?: string }
  /** The channel with this id (`Chat-List-ID: <name> <id>`). */
  | { readonly kind: "channel"; readonly listId: string; readonly name?: string }
  /** Nowhere: the reason is logged. */
  | { readonly kind: "discard"; readonly reason: string };

/** Delta Chat's `validate_id`: 11–32 characters of `[A-Za-z0-9_-]`. */
export function isValidGroupId(id: string): boolean {
  return /^[A-Za-z0-9_-]{11,32}$/.test(id);
}

/** The id inside `<…>` of a `List-ID`/`Chat-List-ID` value, else the trimmed value. */
export function listIdOf(value: string): string {
  const m = /<([^<>]*)>\s*$/.exec(value);
  return (m ? m[1] : value).trim();
}

/** The name before `<…>` of a `Chat-List-ID` value ('' when none). */
export function listNameOf(value: string): string {
  const lt = value.lastIndexOf("<");
  return lt < 0 ? "" : value.slice(0, lt).trim();
}

/** Decides where `mail` (a chat message, already read and verified) belongs. */
export function assignChat(mail: ReadMail): ChatAssignment {
  const list = mail.headers.get(Header.LIST_ID) ?? mail.headers.get(Header.CHAT_LIST_ID);
  const rawName = mail.headers.get(Header.CHAT_GROUP_NAME);
  const name = (rawName && decodeEncodedWords(rawName).trim()) || undefined;
  if (list !== undefined) {
    const listId = listIdOf(list);
    if (listId === "") return { kind: "discard", reason: "empty List-ID" };
    const channelName = name ?? (listNameOf(list) || undefined);
    return { kind: "channel", listId, ...(channelName === undefined ? {} : { name: channelName }) };
  }
  const grpid = mail.headers.get(Header.CHAT_GROUP_ID)?.trim() ?? "";
  const verified = mail.encrypted && mail.signer !== undefined;
  if (grpid !== "" && isValidGroupId(grpid) && verified) {
    return { kind: "group", grpid, ...(name === undefined ? {} : { name }) };
  }
  return { kind: "single" };
}
