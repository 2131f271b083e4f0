/**
 * Defensive MIME parser for received mail: headers (unfolded, RFC 2047 decoded on request),
 * nested multiparts, base64 / quoted-printable bodies, RFC 2231 parameters. Pure and bounded:
 * hostile input ends in a MimeParseError, never a crash or unbounded work.
 */
import { Buffer } from "node:buffer";

/** Mail that cannot be parsed within the limits; the message says what was wrong. */
export class MimeParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MimeParseError";
  }
}

/** Bounds on hostile input. */
export const MIME_LIMITS = { maxHeaderBytes: 256 * 1024, maxParts: 500, maxDepth: 12 } as const;

/** A header value with its parameters (`type/subtype; k=v`). */
export interface ParamValue {
  readonly value: string;
  readonly params: Readonly<Record<string, string>>;
}

/** A leaf body that a streaming parse wrote to a file instead of keeping it (stream_parser.ts). */
export interface SpooledBody {
  /** The temporary file holding the decoded body. */
  readonly path: string;
  readonly bytes: number;
  /** Lower-case hex SHA-256 of the decoded body. */
  readonly sha256: string;
}

/** One MIME entity. Leaves carry a decoded `body`; multiparts carry `parts`. */
export interface MimePart {
  readonly headers: MimeHeaders;
  readonly contentType: ParamValue;
  readonly disposition?: ParamValue;
  /** The decoded body of a leaf (empty when it was spooled or dropped by a streaming parse). */
  readonly body: Uint8Array;
  readonly parts: readonly MimePart[];
  /** Where a streaming parse wrote this leaf's body instead (`body` is then empty). */
  readonly spooled?: SpooledBody;
}

const utf8 = new TextDecoder("utf-8");

/**
 * Bytes as a string of char codes 0-255, in one native pass (node's "latin1" is 1:1; WHATWG's
 * "latin1" label is windows-1252, which is not). No intermediate copies: large mail is parsed
 * with one string of its size.
 */
function binaryString(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** The reverse of {@link binaryString}: char codes 0-255 back to bytes. */
function toBytes(binary: string): Uint8Array {
  return plainBytes(Buffer.from(binary, "latin1"));
}

/** A Buffer's bytes as a plain Uint8Array view (no copy). */
function plainBytes(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Case-insensitive, multi-valued, unfolded header fields in order. */
export class MimeHeaders {
  readonly #fields: [string, string][];
  constructor(fields: [string, string][]) {
    this.#fields = fields;
  }
  /** The first value of `name` (raw, unfolded), or undefined. */
  get(name: string): string | undefined {
    const n = name.toLowerCase();
    return this.#fields.find(([k]) => k === n)?.[1];
  }
  /** Every value of `name`, in order. */
  getAll(name: string): string[] {
    const n = name.toLowerCase();
    return this.#fields.filter(([k]) => k === n).map(([, v]) => v);
  }
  /** All fields as `[lower-case name, value]`. */
  entries(): readonly [string, string][] {
    return this.#fields;
  }
}

/** Parses a header section (bytes as a string of char codes 0-255), within the header limit. */
export function parseHeaderBlock(block: string): MimeHeaders {
  if (block.length > MIME_LIMITS.maxHeaderBytes) {
    throw new MimeParseError(
      `header section is ${block.length} bytes, over the ${MIME_LIMITS.maxHeaderBytes} limit`,
    );
  }
  const fields: [string, string][] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) {
      fields[fields.length - 1][1] += " " + line.trim();
    } else {
      const colon = line.indexOf(":");
      if (colon <= 0) continue; // not a header line: ignored, as mail clients do
      const value = utf8.decode(toBytes(line.slice(colon + 1).trim())); // 8-bit headers are UTF-8
      fields.push([line.slice(0, colon).trim().toLowerCase(), value]);
    }
  }
  return new MimeHeaders(fields);
}

/** Parses `value; a=b; c="d"`, including RFC 2231 `k*=utf-8''..` and `k*0*=` continuations. */
export function parseParamValue(raw: string | undefined): ParamValue {
  const text = raw ?? "";
  const semi = text.indexOf(";");
  const value = (semi < 0 ? text : text.slice(0, semi)).trim().toLowerCase();
  const params: Record<string, string> = {};
  const pieces: Record<string, { i: number; v: string; enc: boolean }[]> = {};
  const re = /;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;
  for (const m of (semi < 0 ? "" : text.slice(semi)).matchAll(re)) {
    let key = m[1].toLowerCase();
    let v = m[2].trim();
    if (v.startsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, "$1");
    const cont = /^(.+?)\*(\d+)?(\*)?$/.exec(key);
    if (cont) {
      key = cont[1];
      (pieces[key] ??= []).push({
        i: Number(cont[2] ?? 0),
        v,
        enc: cont[3] !== undefined || cont[2] === undefined,
      });
    } else params[key] = v;
  }
  for (const [key, list] of Object.entries(pieces)) {
    list.sort((a, b) => a.i - b.i);
    let charset = "utf-8";
    const joined = list.map((p, idx) => {
      let v = p.v;
      if (idx === 0 && p.enc) {
        const m = /^([^']*)'[^']*'(.*)$/.exec(v);
        if (m) [charset, v] = [m[1] || "utf-8", m[2]];
      }
      return p.enc
        ? v.replace(/%([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))
        : v;
    }).join("");
    params[key] = decodeCharset(toBytes(joined), charset);
  }
  return { value, params };
}

/** Decodes bytes in `charset` (utf-8, latin1/iso-8859-x, ascii; unknown → utf-8, lax). */
export function decodeCharset(bytes: Uint8Array, charset = "utf-8"): string {
  try {
    return new TextDecoder(charset.toLowerCase()).decode(bytes);
  } catch {
    return utf8.decode(bytes);
  }
}

/** Decodes RFC 2047 encoded words (`=?utf-8?B?..?=`, `=?..?Q?..?=`) in a header value. */
export function decodeEncodedWords(value: string): string {
  return value.replace(/\?=\s+=\?/g, "?==?").replace(
    /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g,
    (_, charset: string, enc: string, text: string) => {
      const bytes = enc.toUpperCase() === "B" ? decodeBase64Lenient(text) : toBytes(
        text.replace(/_/g, " ").replace(
          /=([0-9A-Fa-f]{2})/g,
          (_m, h) => String.fromCharCode(parseInt(h, 16)),
        ),
      );
      return decodeCharset(bytes, charset.replace(/\*.*$/, ""));
    },
  );
}

/**
 * Base64 as mail clients read it: characters outside the alphabet (padding included) are
 * skipped; a last group of one character cannot be decoded. Decoded natively, straight to bytes.
 */
function decodeBase64Lenient(text: string): Uint8Array {
  const clean = text.replace(/[^A-Za-z0-9+/]/g, "");
  if (clean.length % 4 === 1) throw new MimeParseError("body is not valid base64");
  return plainBytes(Buffer.from(clean, "base64"));
}

function decodeQuotedPrintable(text: string): Uint8Array {
  const joined = text.replace(/=\r?\n/g, "");
  return toBytes(
    joined.replace(/=([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16))),
  );
}

function decodeBody(binary: string, encoding: string | undefined): Uint8Array {
  switch ((encoding ?? "7bit").trim().toLowerCase()) {
    case "base64":
      return decodeBase64Lenient(binary);
    case "quoted-printable":
      return decodeQuotedPrintable(binary);
    default:
      return toBytes(binary);
  }
}

/** Splits an entity into header block and body at the first empty line. */
function splitEntity(binary: string): [string, string] {
  const m = /\r?\n\r?\n/.exec(binary);
  if (!m) return [binary, ""];
  return [binary.slice(0, m.index), binary.slice(m.index + m[0].length)];
}

/**
 * Index of the next delimiter line at or after `from` (RFC 2046 §5.1.1: at a line start, `--` +
 * boundary, then optional `--`, optional white space and the line end), or -1. A longer boundary
 * that merely starts with this one (`b1` vs `b10`) is not a match.
 */
function findDelimiter(body: string, delim: string, from: number): number {
  const tail = /(--)?[ \t]*(\r?\n|$)/y;
  for (let i = body.indexOf(delim, from); i >= 0; i = body.indexOf(delim, i + 1)) {
    if (i > 0 && body[i - 1] !== "\n") continue;
    tail.lastIndex = i + delim.length;
    if (tail.test(body)) return i;
  }
  return -1;
}

function splitMultipart(body: string, boundary: string): string[] {
  const delim = `--${boundary}`;
  const parts: string[] = [];
  let cursor = findDelimiter(body, delim, 0); // start of the first delimiter line
  if (cursor < 0) throw new MimeParseError(`multipart boundary "${boundary}" never occurs`);
  while (cursor >= 0) {
    const lineEnd = body.indexOf("\n", cursor);
    if (body.startsWith(`${delim}--`, cursor) || lineEnd < 0) break;
    const next = findDelimiter(body, delim, lineEnd + 1);
    const end = next < 0 ? body.length : next - 1; // the line break before it belongs to it
    parts.push(body.slice(lineEnd + 1, end > 0 && body[end - 1] === "\r" ? end - 1 : end));
    if (parts.length > MIME_LIMITS.maxParts) {
      throw new MimeParseError(`more than ${MIME_LIMITS.maxParts} MIME parts`);
    }
    cursor = next;
  }
  return parts;
}

/** Refuses an entity nested deeper than, or counted past, MIME_LIMITS (both parsers). */
export function checkEntityBudget(depth: number, parts: number): void {
  if (depth > MIME_LIMITS.maxDepth) {
    throw new MimeParseError(`MIME nesting deeper than ${MIME_LIMITS.maxDepth}`);
  }
  if (parts > MIME_LIMITS.maxParts) {
    throw new MimeParseError(`more than ${MIME_LIMITS.maxParts} MIME parts`);
  }
}

/** An entity's parsed head: its headers, Content-Type (default text/plain) and disposition. */
export function entityHead(
  headers: MimeHeaders,
): Pick<MimePart, "headers" | "contentType" | "disposition"> {
  const dispRaw = headers.get("content-disposition");
  return {
    headers,
    contentType: parseParamValue(headers.get("content-type") ?? "text/plain; charset=us-ascii"),
    ...(dispRaw === undefined ? {} : { disposition: parseParamValue(dispRaw) }),
  };
}

function parseEntity(binary: string, depth: number, budget: { parts: number }): MimePart {
  checkEntityBudget(depth, ++budget.parts);
  const [head, rawBody] = splitEntity(binary);
  const part = entityHead(parseHeaderBlock(head));
  const { contentType, headers } = part;
  if (contentType.value.startsWith("multipart/")) {
    const boundary = contentType.params.boundary;
    if (!boundary) throw new MimeParseError(`${contentType.value} without a boundary parameter`);
    const parts = splitMultipart(rawBody, boundary).map((p) => parseEntity(p, depth + 1, budget));
    return { ...part, body: new Uint8Array(), parts };
  }
  const body = decodeBody(rawBody, headers.get("content-transfer-encoding"));
  return { ...part, body, parts: [] };
}

/** Parses a whole message. Throws MimeParseError for input beyond the limits. */
export function parseMime(raw: Uint8Array): MimePart {
  return parseEntity(binaryString(raw), 0, { parts: 0 });
}

/** The text of a leaf part, decoded with its charset. */
export function partText(part: MimePart): string {
  return decodeCharset(part.body, part.contentType.params.charset ?? "utf-8");
}

/** All leaves in document order (depth first). */
export function leaves(part: MimePart): MimePart[] {
  return part.parts.length === 0 ? [part] : part.parts.flatMap(leaves);
}
