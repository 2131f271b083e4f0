/**
 * What a mail to a group says about the group, as Delta Chat 2.x writes it (docs/protocol-notes.md
 * §2, §3): the inner `To` (every member, newest first, self left out unless alone), past
 * members, `Chat-Group-Member-Timestamps`/`-Fpr` aligned with them, the id, name and name time,
 * the change it announces, and whether every member's key is gossiped. `groupHeaders` turns it
 * into header lines. Pure: values in, values out.
 */
import { CHAT_CONTENT_GROUP_AVATAR_CHANGED, Header, SecureJoinStep } from "../../protocol.ts";
import { toBase64 } from "../../crypto/armor.ts";

/** Members leave the past-members list this long after their removal (Delta Chat: 60 days). */
export const PAST_MEMBER_SECONDS = 60 * 24 * 3600;

/** Every member's key is gossiped again when it was not sent for this long (Delta Chat: 2 days). */
export const GOSSIP_PERIOD_SECONDS = 2 * 24 * 3600;

/** A member as the group headers list it. */
export interface GroupMailMember {
  readonly addr: string;
  /** The member's own name ('' when unknown). */
  readonly name: string;
  /** Upper-case hex. */
  readonly fingerprint: string;
  /** Added (current members) or removed (past members) at, Unix seconds. */
  readonly timestamp: number;
}

/** An image sent as the group avatar. */
export interface GroupAvatarImage {
  readonly bytes: Uint8Array;
  readonly mime: string;
}

/** The change a group system message announces. */
export type GroupChange =
  | {
    readonly kind: "member-added";
    readonly addr: string;
    readonly fingerprint: string;
    /** The add ends a SecureJoin (`Secure-Join: vg-member-added`). */
    readonly secureJoin?: boolean;
  }
  | { readonly kind: "member-removed"; readonly addr: string; readonly fingerprint: string }
  | { readonly kind: "name-changed"; readonly oldName: string }
  | { readonly kind: "avatar-changed"; readonly image: GroupAvatarImage | null };

/** The group part of one outgoing mail. */
export interface GroupMail {
  readonly grpid: string;
  readonly name: string;
  /** Unix seconds of the current name. */
  readonly nameTimestamp: number;
  /** Inner `To`: current members, newest first; self only when it is the only one. */
  readonly to: readonly GroupMailMember[];
  /** Members removed within `PAST_MEMBER_SECONDS`, most recently removed first. */
  readonly past: readonly GroupMailMember[];
  readonly change?: GroupChange;
  /** Send `Autocrypt-Gossip` for every recipient key. */
  readonly gossip: boolean;
  /** The group's avatar, sent along on member-added so a new member sees it. */
  readonly avatar?: GroupAvatarImage;
}

/** The fallback text of a system message, for mail clients that show the body. */
export function groupChangeBody(change: GroupChange, selfAddr: string): string {
  switch (change.kind) {
    case "member-added":
      return `Member ${change.addr} was added.`;
    case "member-removed":
      return change.addr === selfAddr
        ? `${change.addr} left the group.`
        : `Member ${change.addr} was removed.`;
    case "name-changed":
      return "Chat name changed.";
    case "avatar-changed":
      return "Chat image changed.";
  }
}

/** `base64:<b64>` folded with spaces every 76 characters, as Delta Chat sends images in headers. */
function avatarValue(image: GroupAvatarImage | null): string {
  if (image === null) return "0";
  const b64 = toBase64(image.bytes);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 76) lines.push(b64.slice(i, i + 76));
  return `base64:${lines.join(" ")}`;
}

/** RFC 2047 B-encoding of any text (also empty), as Delta Chat sends the description. */
function bEncoded(text: string): string {
  return `=?utf-8?B?${toBase64(new TextEncoder().encode(text))}?=`;
}

/** The group header lines of a mail, in Delta Chat's order (receivers do not care). */
export function groupHeaders(
  g: GroupMail,
  encodeWord: (text: string) => string,
): [string, string][] {
  const h: [string, string][] = [];
  if (g.past.length > 0) {
    h.push([
      Header.CHAT_GROUP_PAST_MEMBERS,
      g.past.map((m) =>
        m.name ? `"${m.name.replace(/(["\\])/g, "\\$1")}" <${m.addr}>` : `<${m.addr}>`
      )
        .join(", "),
    ]);
  }
  const listed = [...g.to, ...g.past];
  h.push([Header.CHAT_GROUP_MEMBER_TIMESTAMPS, listed.map((m) => String(m.timestamp)).join(" ")]);
  h.push([Header.CHAT_GROUP_MEMBER_FPR, listed.map((m) => m.fingerprint).join(" ")]);
  h.push([Header.CHAT_GROUP_ID, g.grpid]);
  h.push([Header.CHAT_GROUP_NAME, encodeWord(g.name)]);
  h.push([Header.CHAT_GROUP_NAME_TIMESTAMP, String(g.nameTimestamp)]);
  const c = g.change;
  if (c?.kind === "member-added") {
    h.push([Header.CHAT_GROUP_MEMBER_ADDED, c.addr.toLowerCase()]);
    h.push([Header.CHAT_GROUP_MEMBER_ADDED_FPR, c.fingerprint]);
    if (c.secureJoin) h.push([Header.SECURE_JOIN, SecureJoinStep.VG_MEMBER_ADDED]);
    h.push([Header.CHAT_GROUP_DESCRIPTION, bEncoded("")]);
    h.push([Header.CHAT_GROUP_DESCRIPTION_TIMESTAMP, String(g.nameTimestamp)]);
    if (g.avatar !== undefined) h.push([Header.CHAT_GROUP_AVATAR, avatarValue(g.avatar)]);
  } else if (c?.kind === "member-removed") {
    h.push([Header.CHAT_GROUP_MEMBER_REMOVED, c.addr.toLowerCase()]);
    h.push([Header.CHAT_GROUP_MEMBER_REMOVED_FPR, c.fingerprint]);
  } else if (c?.kind === "name-changed") {
    h.push([Header.CHAT_GROUP_NAME_CHANGED, encodeWord(c.oldName)]);
  } else if (c?.kind === "avatar-changed") {
    h.push([Header.CHAT_CONTENT, CHAT_CONTENT_GROUP_AVATAR_CHANGED]);
    h.push([Header.CHAT_GROUP_AVATAR, avatarValue(c.image)]);
  }
  return h;
}
