/**
 * The group headers of a received mail, parsed (inner `To`, past members, member timestamps and
 * fingerprints, added/removed, name and its time), and `Chat-Group-Avatar` read into a blob
 * before the reception transaction. Timestamps are clamped to now + 60 s, as Delta Chat does.
 */
import { logger } from "../../log.ts";
import { decodeEncodedWords } from "../../mime/parser.ts";
import { Header } from "../../protocol.ts";
import { type BlobFile, writeBlob } from "../blobs.ts";
import type { CoreContext } from "../context.ts";
import { type HeaderMailbox, parseMailboxList, type ReadMail } from "../receive/mail_reader.ts";

const log = logger("receive");

/** Timestamps further in the future than this are clamped to now (Delta Chat: 60 s). */
const MAX_FUTURE_SECONDS = 60;

/** What `prepare` produced for `apply`. */
export interface GroupPrep {
  /** `Chat-Group-Avatar` as a blob (undefined: no header; null: `0`, the avatar removed). */
  readonly avatar?: BlobFile | null;
}

/** The group headers of a mail, parsed; undefined where a header is absent (or unusable). */
export interface GroupHeaders {
  readonly to: HeaderMailbox[];
  readonly past: HeaderMailbox[];
  readonly timestamps: number[] | undefined;
  readonly fprs: string[] | undefined;
  readonly added: string | undefined;
  readonly removed: string | undefined;
  readonly removedFpr: string | undefined;
  readonly nameChanged: string | undefined;
  readonly nameTimestamp: number | undefined;
}

function words(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.trim().split(/\s+/).filter((w) => w !== "");
}

export function parseGroupHeaders(mail: ReadMail, now: number): GroupHeaders {
  const h = mail.headers;
  const ts = words(h.get(Header.CHAT_GROUP_MEMBER_TIMESTAMPS));
  const nameTs = Number(h.get(Header.CHAT_GROUP_NAME_TIMESTAMP)?.trim() ?? "");
  const changed = h.get(Header.CHAT_GROUP_NAME_CHANGED);
  return {
    to: parseMailboxList(h.get(Header.TO)),
    past: parseMailboxList(h.get(Header.CHAT_GROUP_PAST_MEMBERS)),
    timestamps: ts?.every((t) => /^\d{1,12}$/.test(t))
      ? ts.map((t) => Math.min(Number(t), now + MAX_FUTURE_SECONDS))
      : undefined,
    fprs: words(h.get(Header.CHAT_GROUP_MEMBER_FPR))?.map((f) => f.toUpperCase()),
    added: h.get(Header.CHAT_GROUP_MEMBER_ADDED)?.trim().toLowerCase() || undefined,
    removed: h.get(Header.CHAT_GROUP_MEMBER_REMOVED)?.trim().toLowerCase() || undefined,
    removedFpr: h.get(Header.CHAT_GROUP_MEMBER_REMOVED_FPR)?.trim().toUpperCase() || undefined,
    nameChanged: changed === undefined ? undefined : decodeEncodedWords(changed).trim(),
    nameTimestamp: Number.isFinite(nameTs) && nameTs > 0
      ? Math.min(nameTs, now + MAX_FUTURE_SECONDS)
      : undefined,
  };
}

/** Reads `Chat-Group-Avatar` into a blob before the transaction (`base64:…`, or `0`: removed). */
export async function prepareGroup(ctx: CoreContext, mail: ReadMail): Promise<GroupPrep> {
  const value = mail.headers.get(Header.CHAT_GROUP_AVATAR)?.trim();
  if (value === undefined) return {};
  if (value === "0") return { avatar: null };
  const b64 = value.replace(/^base64:/i, "").replace(/\s+/g, "");
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    log.warn("group avatar is not valid base64; ignored", { messageId: mail.messageId });
    return {};
  }
  const mime = bytes[0] === 0x89 ? "image/png" : "image/jpeg";
  return {
    avatar: await writeBlob(
      ctx.blobDir,
      bytes,
      mime === "image/png" ? "avatar.png" : "avatar.jpg",
      mime,
    ),
  };
}
