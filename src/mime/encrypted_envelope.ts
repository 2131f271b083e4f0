/**
 * The outer message of an encrypted chat mail as chatmail relays accept it and Delta Chat writes
 * it: `multipart/encrypted` with exactly two parts (`Version: 1`, then the armored message), the
 * address-only From, hidden recipients, `[...]` subject. All CRLF. Pure: values in, bytes out.
 */
import { armoredLength, armorMessage } from "../crypto/armor.ts";
import { CHAT_VERSION, Header } from "../protocol.ts";

/** Inputs of the outer envelope; the real headers live in the encrypted part. */
export interface EnvelopeInput {
  readonly from: string;
  readonly messageId: string;
  /** The Date header value (callers pass a past, randomized time as Delta Chat does). */
  readonly date: Date;
  readonly ciphertext: Uint8Array;
  /** Boundary string (random in production; fixed in tests). */
  readonly boundary: string;
  /** Extra outer headers, e.g. `Chat-Is-Post-Message: 1`. */
  readonly extra?: readonly [string, string][];
}

/** RFC 5322 date in UTC. */
export function rfc5322Date(d: Date): string {
  return d.toUTCString().replace("GMT", "+0000");
}

/**
 * Exact length in bytes of `renderEncryptedEnvelope(e)` for a ciphertext of `cipherBytes` bytes
 * (e's own ciphertext is ignored).
 */
export function encryptedEnvelopeLength(e: EnvelopeInput, cipherBytes: number): number {
  const frame = renderEncryptedEnvelope({ ...e, ciphertext: new Uint8Array(0) }).length;
  return frame - armoredLength(0) + armoredLength(cipherBytes);
}

/** Renders the outer `multipart/encrypted` message. */
export function renderEncryptedEnvelope(e: EnvelopeInput): Uint8Array {
  const { head, tail } = renderEncryptedEnvelopeAround(e);
  return new TextEncoder().encode(head + armorMessage(e.ciphertext) + tail);
}

/**
 * The outer message in two pieces, before and after the armored ciphertext (`armorMessage`, or
 * `armorChunks` for a streamed one); `e.ciphertext` is not used.
 */
export function renderEncryptedEnvelopeAround(
  e: Omit<EnvelopeInput, "ciphertext">,
): { head: string; tail: string } {
  const headers: [string, string][] = [
    [
      "Content-Type",
      `multipart/encrypted; protocol="application/pgp-encrypted";\r\n boundary="${e.boundary}"`,
    ],
    ["MIME-Version", "1.0"],
    [Header.FROM, `<${e.from}>`],
    [Header.TO, '"hidden-recipients": ;'],
    [Header.SUBJECT, "[...]"],
    [Header.DATE, rfc5322Date(e.date)],
    [Header.MESSAGE_ID, e.messageId],
    [Header.CHAT_VERSION, CHAT_VERSION],
    ...(e.extra ?? []),
  ];
  const b = `--${e.boundary}`;
  const head = headers.map(([k, v]) => `${k}: ${v}`).join("\r\n") + "\r\n\r\n" +
    `${b}\r\nContent-Type: application/pgp-encrypted; charset="utf-8"\r\nContent-Transfer-Encoding: 7bit\r\n\r\nVersion: 1\r\n\r\n` +
    `${b}\r\nContent-Type: application/octet-stream; charset="utf-8"\r\nContent-Transfer-Encoding: 7bit\r\n\r\n`;
  return { head, tail: `${b}--\r\n` };
}
