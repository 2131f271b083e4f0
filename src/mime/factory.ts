/**
 * Renders the inner (to-be-encrypted) MIME of chat messages as Delta Chat writes them: protected
 * headers on the root, `Chat-Version: 1.0`, the sender's Autocrypt key, optional gossip, text,
 * file attachments, read receipts (MDN) and SecureJoin steps. All CRLF. Pure: values in, bytes out.
 */
import { formatAutocrypt } from "../crypto/autocrypt_header.ts";
import { toBase64 } from "../crypto/armor.ts";
import { CHAT_VERSION, Header, type SecureJoinStep } from "../protocol.ts";
import { rfc5322Date } from "./encrypted_envelope.ts";

/** A mailbox: address and optional display name. */
export interface Mailbox {
  readonly addr: string;
  readonly name?: string;
}

/** What every inner message carries. */
export interface InnerBase {
  readonly from: Mailbox;
  readonly to: readonly Mailbox[];
  readonly messageId: string;
  readonly date: Date;
  readonly subject: string;
  /** The sender's binary public key (Autocrypt keydata). */
  readonly autocryptKey: Uint8Array;
  /** `Autocrypt-Gossip` entries (SecureJoin steps after the request, groups). */
  readonly gossip?: readonly { addr: string; keydata: Uint8Array }[];
  /** Further headers, e.g. Chat-Disposition-Notification-To, In-Reply-To, Secure-Join-*. */
  readonly extra?: readonly [string, string][];
  /** Boundary for multipart bodies (random in production). */
  readonly boundary?: string;
  /** `To: "hidden-recipients": ;` instead of `to` (channel posts). */
  readonly hiddenRecipients?: boolean;
}

/** A file to attach. */
export interface Attachment {
  readonly name: string;
  readonly mime: string;
  readonly bytes: Uint8Array;
}

/** RFC 2047 encoded word when `text` is not plain printable ASCII. */
export function encodeWord(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  return `=?utf-8?B?${toBase64(new TextEncoder().encode(text))}?=`;
}

/** `"Name" <addr>` (quoted, encoded when needed) or `<addr>`. */
export function formatMailbox(m: Mailbox): string {
  if (!m.name) return `<${m.addr}>`;
  const name = encodeWord(m.name);
  return name.startsWith("=?")
    ? `${name} <${m.addr}>`
    : `"${name.replace(/(["\\])/g, "\\$1")}" <${m.addr}>`;
}

/** `filename="x"`, or the RFC 2231 form for non-ASCII names. */
export function filenameParam(name: string): string {
  if (/^[\x20-\x7e]*$/.test(name) && !/["\\]/.test(name)) return `filename="${name}"`;
  const enc = Array.from(
    new TextEncoder().encode(name),
    (b) =>
      /[A-Za-z0-9._-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
  ).join("");
  return `filename*=utf-8''${enc}`;
}

/** Length in bytes of what `base64Lines` makes of `n` bytes: 76-column lines joined by CRLF. */
export function base64LinesLength(n: number): number {
  const chars = 4 * Math.ceil(n / 3);
  return chars + 2 * Math.max(0, Math.ceil(chars / 76) - 1);
}

function base64Lines(bytes: Uint8Array): string {
  const b64 = toBase64(bytes);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 76) lines.push(b64.slice(i, i + 76));
  return lines.join("\r\n");
}

function crlf(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}

function rootHeaders(m: InnerBase, contentType: string, transferEncoding?: string): string {
  const h: [string, string][] = [
    [Header.CONTENT_TYPE, `${contentType}; protected-headers="v1"; hp="cipher"`],
    [Header.FROM, formatMailbox(m.from)],
    [Header.TO, m.hiddenRecipients ? '"hidden-recipients": ;' : m.to.map(formatMailbox).join(", ")],
    [Header.SUBJECT, encodeWord(m.subject)],
    [Header.DATE, rfc5322Date(m.date)],
    [Header.MESSAGE_ID, m.messageId],
    [Header.CHAT_VERSION, CHAT_VERSION],
    ...(m.extra ?? []),
    [
      Header.AUTOCRYPT,
      formatAutocrypt({ addr: m.from.addr, keydata: m.autocryptKey, preferEncrypt: "mutual" }),
    ],
    ...(m.gossip ?? []).map((g): [string, string] => [Header.AUTOCRYPT_GOSSIP, formatAutocrypt(g)]),
    ["MIME-Version", "1.0"],
    ...(transferEncoding
      ? [["Content-Transfer-Encoding", transferEncoding] as [string, string]]
      : []),
  ];
  return h.map(([k, v]) => `${k}: ${v}`).join("\r\n") + "\r\n";
}

const TEXT_PART =
  'Content-Type: text/plain; charset="utf-8"\r\nContent-Transfer-Encoding: base64\r\n\r\n';

/** A chat message with text and, optionally, one file. */
export function renderChatMessage(m: InnerBase & { text: string; file?: Attachment }): Uint8Array {
  if (!m.file) {
    const text = base64Lines(new TextEncoder().encode(crlf(m.text)));
    return new TextEncoder().encode(
      rootHeaders(m, 'text/plain; charset="utf-8"', "base64") + "\r\n" + text + "\r\n",
    );
  }
  const { head, tail } = renderChatMessageAround({ ...m, file: m.file });
  return new TextEncoder().encode(head + base64Lines(m.file.bytes) + tail);
}

/**
 * A chat message with a file, in two pieces: what comes before the file's base64 body (76-column
 * CRLF lines, `base64LinesLength` bytes) and what comes after it, so the file can be streamed
 * between them. `renderChatMessage` is `head` + body + `tail`.
 */
export function renderChatMessageAround(
  m: InnerBase & { text: string; file: Omit<Attachment, "bytes"> },
): { head: string; tail: string } {
  const text = base64Lines(new TextEncoder().encode(crlf(m.text)));
  const b = m.boundary ?? crypto.randomUUID();
  const file =
    `Content-Type: ${m.file.mime}\r\nContent-Disposition: attachment; ${
      filenameParam(m.file.name)
    }\r\n` +
    `Content-Transfer-Encoding: base64\r\n\r\n`;
  return {
    head: rootHeaders(m, `multipart/mixed; boundary="${b}"`) + "\r\n" +
      `--${b}\r\n${TEXT_PART}${text}\r\n--${b}\r\n${file}`,
    tail: `\r\n--${b}--\r\n`,
  };
}

/**
 * A receipt (MDN) for `originalMessageIds` (the first is Original-Message-ID, the rest batched in
 * Additional-Message-IDs). `displayed` (default) is a read receipt; `processed` is the gateways'
 * automatic delivery receipt (the message is stored on the peer's device).
 */
export function renderReadReceipt(
  m: InnerBase & {
    originalMessageIds: readonly string[];
    disposition?: "displayed" | "processed";
  },
): Uint8Array {
  const b = m.boundary ?? crypto.randomUUID();
  const [first, ...more] = m.originalMessageIds;
  const report =
    `Original-Recipient: rfc822;${m.from.addr}\r\nFinal-Recipient: rfc822;${m.from.addr}\r\n` +
    `Original-Message-ID: ${first}\r\nDisposition: ${
      m.disposition === "processed" ? "automatic-action" : "manual-action"
    }/MDN-sent-automatically; ${m.disposition ?? "displayed"}\r\n` +
    (more.length ? `Additional-Message-IDs: ${more.join(" ")}\r\n` : "");
  const base = {
    ...m,
    extra: [...(m.extra ?? []), [Header.AUTO_SUBMITTED, "auto-replied"] as [string, string]],
  };
  return new TextEncoder().encode(
    rootHeaders(base, `multipart/report; report-type=disposition-notification; boundary="${b}"`) +
      "\r\n" +
      `--${b}\r\nContent-Type: text/plain; charset="utf-8"\r\n\r\nThis is a receipt notification.\r\n` +
      `--${b}\r\nContent-Type: message/disposition-notification\r\n\r\n${report}--${b}--\r\n`,
  );
}

/** A SecureJoin step (vc-auth-required, vc-request-with-auth, vc-contact-confirm): a hidden message. */
export function renderSecureJoinStep(
  m: InnerBase & { step: SecureJoinStep; headers?: readonly [string, string][] },
): Uint8Array {
  const base = {
    ...m,
    extra: [
      ...(m.extra ?? []),
      [Header.SECURE_JOIN, m.step] as [string, string],
      ...(m.headers ?? []),
    ],
  };
  return new TextEncoder().encode(
    rootHeaders(base, 'text/plain; charset="utf-8"') + "\r\n" +
      `${Header.SECURE_JOIN}: ${m.step}\r\n`,
  );
}

/**
 * The joiner's first SecureJoin step, the one plaintext mail chatmail relays let through:
 * `multipart/mixed` with one text/plain part `Secure-Join: <step>`, the invite number and our
 * Autocrypt key in the headers, From without a display name (docs/protocol-notes.md §6.2).
 */
export function renderSecureJoinRequest(p: {
  from: string;
  to: Mailbox;
  messageId: string;
  date: Date;
  step: "vc-request" | "vg-request";
  inviteNumber: string;
  autocryptKey: Uint8Array;
  boundary?: string;
}): Uint8Array {
  const b = p.boundary ?? crypto.randomUUID();
  const h: [string, string][] = [
    [Header.CONTENT_TYPE, `multipart/mixed; boundary="${b}"`],
    ["MIME-Version", "1.0"],
    [Header.FROM, `<${p.from}>`],
    [Header.TO, formatMailbox(p.to)],
    [Header.SUBJECT, "[...]"],
    [Header.DATE, rfc5322Date(p.date)],
    [Header.MESSAGE_ID, p.messageId],
    [Header.CHAT_VERSION, CHAT_VERSION],
    [
      Header.AUTOCRYPT,
      formatAutocrypt({ addr: p.from, keydata: p.autocryptKey, preferEncrypt: "mutual" }),
    ],
    [Header.SECURE_JOIN, p.step],
    [Header.SECURE_JOIN_INVITENUMBER, p.inviteNumber],
  ];
  return new TextEncoder().encode(
    h.map(([k, v]) => `${k}: ${v}`).join("\r\n") + "\r\n\r\n" +
      `--${b}\r\nContent-Type: text/plain; charset="utf-8"\r\n\r\n${Header.SECURE_JOIN}: ${p.step}\r\n--${b}--\r\n`,
  );
}
