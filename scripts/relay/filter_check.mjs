// @ts-check
// Pure acceptance check of the test relay's outgoing-mail filter, modelled on chatmail's
// filtermail: only OpenPGP-encrypted mail and SecureJoin requests may leave (docs/protocol-notes.md
// §1.3).
// No I/O here, so the rules can be unit-tested directly; filter.mjs does the SMTP side.

/** Reply for mail that is not properly encrypted. */
export const REPLY_UNENCRYPTED = "523 5.7.1 Encryption Needed: Invalid Unencrypted Mail";

const ARMOR_BEGIN = "-----BEGIN PGP MESSAGE-----\r\n";
const ARMOR_END = "-----END PGP MESSAGE-----";
const TAG_PKESK = 1;
const TAG_SKESK = 3;
const TAG_SEIPD = 18;

/**
 * Splits raw RFC 5322 text (CRLF or LF line ends) into unfolded headers and the body.
 * @param {string} raw
 * @returns {{ headers: Map<string, string[]>, body: string }}
 */
export function parseEntity(raw) {
  const m = /(?:^|\r?\n)\r?\n/.exec(raw);
  const head = m ? raw.slice(0, m.index) : raw;
  const body = m ? raw.slice(m.index + m[0].length) : "";
  /** @type {Map<string, string[]>} */
  const headers = new Map();
  for (const line of head.replace(/\r?\n(?=[ \t])/g, "").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const list = headers.get(name) ?? [];
    list.push(line.slice(colon + 1).trim());
    headers.set(name, list);
  }
  return { headers, body };
}

/**
 * Parses a Content-Type value into its lower-cased type and its parameters
 * (text/plain when absent, as RFC 2045 says).
 * @param {string | undefined} value
 * @returns {{ type: string, params: Map<string, string> }}
 */
export function parseContentType(value) {
  /** @type {Map<string, string>} */
  const params = new Map();
  if (!value) return { type: "text/plain", params };
  const semi = value.indexOf(";");
  const type = semi < 0 ? value : value.slice(0, semi);
  const re = /;\s*([^=\s;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  for (const p of value.slice(type.length).matchAll(re)) {
    params.set(p[1].toLowerCase(), p[2] !== undefined ? p[2].replace(/\\(.)/g, "$1") : p[3]);
  }
  const t = type.trim().toLowerCase();
  return { type: /^[^/\s]+\/[^/\s]+$/.test(t) ? t : "text/plain", params };
}

/**
 * Splits a multipart body into its parts' raw text; the CRLF before each delimiter belongs
 * to the delimiter (RFC 2046 §5.1.1). Returns null when no closing delimiter is found.
 * @param {string} body
 * @param {string} boundary
 * @returns {string[] | null}
 */
export function splitMultipart(body, boundary) {
  const lines = body.split("\r\n");
  /** @type {string[]} */
  const parts = [];
  /** @type {string[] | null} */
  let current = null;
  for (const line of lines) {
    const trimmed = line.replace(/[ \t]+$/, "");
    if (trimmed === `--${boundary}--`) {
      if (current) parts.push(current.join("\r\n"));
      return parts;
    }
    if (trimmed === `--${boundary}`) {
      if (current) parts.push(current.join("\r\n"));
      current = [];
    } else if (current) {
      current.push(line);
    }
  }
  return null;
}

/**
 * Returns the parts of a multipart entity, or null when it is not a well-formed multipart.
 * @param {{ headers: Map<string, string[]>, body: string }} entity
 */
function multipartChildren(entity) {
  const ct = parseContentType(entity.headers.get("content-type")?.[0]);
  const boundary = ct.params.get("boundary");
  if (!ct.type.startsWith("multipart/") || !boundary) return null;
  const raw = splitMultipart(entity.body, boundary);
  return raw && raw.map((part) => parseEntity(part));
}

/**
 * True when `payload` is a sequence of PKESK/SKESK packets ending in exactly one SEIPD packet.
 * Understands new-format headers (with partial body lengths) and old-format headers; old-format
 * packets are refused all the same, as chatmail's filtermail does ("only OpenPGP format").
 * @param {Uint8Array} payload
 * @returns {boolean}
 */
export function isEncryptedPacketSequence(payload) {
  let i = 0;
  while (i < payload.length) {
    const header = readPacketHeader(payload, i);
    if (!header || !header.newFormat) return false;
    i = header.end;
    if (i === payload.length) return header.tag === TAG_SEIPD;
    if (i > payload.length) return false;
    if (header.tag !== TAG_PKESK && header.tag !== TAG_SKESK) return false;
  }
  return false;
}

/**
 * Reads the packet header at `start` and returns the packet's tag and the offset just past
 * its body, or null when the header is invalid or truncated (RFC 9580 §4.2).
 * @param {Uint8Array} b
 * @param {number} start
 * @returns {{ tag: number, end: number, newFormat: boolean } | null}
 */
export function readPacketHeader(b, start) {
  const first = b[start];
  if (first === undefined || (first & 0x80) === 0) return null;
  let i = start + 1;
  if ((first & 0x40) === 0) { // old format: tag in bits 5-2, length type in bits 1-0
    const tag = (first >> 2) & 0x0f;
    const lengthType = first & 0x03;
    if (lengthType === 3) return { tag, end: b.length, newFormat: false }; // "until the end"
    const n = [1, 2, 4][lengthType];
    if (i + n > b.length) return null;
    let len = 0;
    for (let k = 0; k < n; k++) len = len * 256 + b[i + k];
    return { tag, end: i + n + len, newFormat: false };
  }
  const tag = first & 0x3f;
  for (;;) {
    const o = b[i];
    if (o === undefined) return null;
    if (o < 192) return { tag, end: i + 1 + o, newFormat: true };
    if (o < 224) {
      if (i + 1 >= b.length) return null;
      return { tag, end: i + 2 + ((o - 192) << 8) + b[i + 1] + 192, newFormat: true };
    }
    if (o === 255) {
      if (i + 4 >= b.length) return null;
      const len = ((b[i + 1] << 24) >>> 0) + (b[i + 2] << 16) + (b[i + 3] << 8) + b[i + 4];
      return { tag, end: i + 5 + len, newFormat: true };
    }
    i += 1 + (1 << (o & 0x1f)); // partial body length: a chunk, then another length octet
  }
}

/**
 * Strict base64 decode: only the canonical encoding of some bytes is accepted.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
export function decodeBase64Strict(text) {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? new Uint8Array(bytes) : null;
}

/**
 * Checks an ASCII-armored OpenPGP message as outgoing mail must carry it: CRLF BEGIN line,
 * no Version header, base64 up to the last "=" (the CRC-24 line), packets as above.
 * @param {string} text
 * @returns {boolean}
 */
export function isValidArmoredMessage(text) {
  if (!text.startsWith(ARMOR_BEGIN)) return false;
  let rest = text.slice(ARMOR_BEGIN.length);
  while (rest.endsWith("\r\n")) rest = rest.slice(0, -2);
  if (!rest.endsWith(ARMOR_END)) return false;
  rest = rest.slice(0, -ARMOR_END.length);
  if (rest.startsWith("Version: ")) return false;
  while (rest.startsWith("\r\n")) rest = rest.slice(2);
  const eq = rest.lastIndexOf("=");
  if (eq >= 0) rest = rest.slice(0, eq);
  const bytes = decodeBase64Strict(rest.replace(/[\r\n]/g, ""));
  return bytes !== null && isEncryptedPacketSequence(bytes);
}

/**
 * True for a PGP/MIME encrypted message (RFC 3156): multipart/encrypted with exactly two
 * leaf parts, "Version: 1" then an armored message.
 * @param {{ headers: Map<string, string[]>, body: string }} message
 */
export function isEncryptedMail(message) {
  const ct = parseContentType(message.headers.get("content-type")?.[0]);
  if (ct.type !== "multipart/encrypted") return false;
  const parts = multipartChildren(message);
  if (!parts || parts.length !== 2) return false;
  const [control, data] = parts.map((p) => ({
    type: parseContentType(p.headers.get("content-type")?.[0]).type,
    body: p.body,
  }));
  return control.type === "application/pgp-encrypted" && control.body.trim() === "Version: 1" &&
    data.type === "application/octet-stream" && isValidArmoredMessage(data.body);
}

/**
 * True for the one plaintext message SecureJoin needs: a vc-request or vg-request whose only
 * part is text/plain saying so.
 * @param {{ headers: Map<string, string[]>, body: string }} message
 */
export function isSecureJoinRequest(message) {
  const step = message.headers.get("secure-join")?.[0];
  if (step !== "vc-request" && step !== "vg-request") return false;
  const parts = multipartChildren(message);
  if (!parts || parts.length !== 1) return false;
  const part = parts[0];
  if (parseContentType(part.headers.get("content-type")?.[0]).type !== "text/plain") return false;
  const text = part.body.trim().toLowerCase();
  return text === "secure-join: vc-request" || text === "secure-join: vg-request";
}

/**
 * Extracts the address of a From: header value ("Name <a@b>", "a@b", "a@b (comment)").
 * @param {string | undefined} value
 * @returns {string}
 */
export function headerAddress(value) {
  if (!value) return "";
  const angle = /<([^<>]*)>\s*$/.exec(value) ?? /<([^<>]*)>/.exec(value);
  if (angle) return angle[1].trim();
  return value.replace(/\([^()]*\)/g, "").trim();
}

/**
 * Decides about one outgoing mail. Returns null to accept it, or the SMTP reply to refuse it.
 * @param {string} mailFrom envelope sender
 * @param {string[]} rcptTo envelope recipients
 * @param {string} raw the message as received after DATA (CRLF line ends)
 * @returns {string | null}
 */
export function checkOutgoing(mailFrom, rcptTo, raw) {
  const message = parseEntity(raw);
  const from = headerAddress(message.headers.get("from")?.[0]);
  if (!from || from.toLowerCase() !== mailFrom.toLowerCase()) {
    return `500 Invalid FROM <${from}> for <${mailFrom}>`;
  }
  if (isEncryptedMail(message) || isSecureJoinRequest(message)) return null;
  // a self-sent Autocrypt Setup Message is plaintext by design
  const selfSent = rcptTo.length === 1 && rcptTo[0].toLowerCase() === from.toLowerCase();
  if (
    selfSent && message.headers.get("subject")?.[0] === "Autocrypt Setup Message" &&
    parseContentType(message.headers.get("content-type")?.[0]).type === "multipart/mixed"
  ) return null;
  return REPLY_UNENCRYPTED;
}
