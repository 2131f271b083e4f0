/**
 * ASCII armor for OpenPGP messages as chatmail relays require it: CRLF lines, no armor headers,
 * 64-character base64 lines and always a CRC-24 checksum line (OpenPGP.js omits it for SEIPDv2,
 * and the relay's filter then refuses the mail). Pure: bytes in, text out, and back.
 */
import { Buffer } from "node:buffer";
import { base64LineChunks } from "./base64_lines.ts";

/** The first and last line of an armored message. */
export const ARMOR_BEGIN = "-----BEGIN PGP MESSAGE-----";
export const ARMOR_END = "-----END PGP MESSAGE-----";
const BEGIN = ARMOR_BEGIN;
const END = ARMOR_END;
const LINE = 64;

/** Armor that cannot be read: the message says what is wrong. */
export class ArmorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArmorError";
  }
}

/** CRC-24 of each byte value (the bitwise loop below, run once per byte value). */
const CRC24_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
    table[n] = crc & 0xffffff;
  }
  return table;
})();

/** The initial value of the armor's CRC-24 (RFC 4880 §6.1). */
export const CRC24_INIT = 0xb704ce;

/**
 * CRC-24 of RFC 4880 §6.1 (init 0xB704CE, generator 0x1864CFB), a table lookup per byte; pass the
 * previous result as `crc` to continue over the next piece of the same data.
 */
export function crc24(bytes: Uint8Array, crc = CRC24_INIT): number {
  for (let i = 0; i < bytes.length; i++) {
    crc = ((crc << 8) & 0xffffff) ^ CRC24_TABLE[((crc >> 16) ^ bytes[i]) & 0xff];
  }
  return crc;
}

/** Standard base64 of `bytes`, built in blocks so large messages do not blow the call stack. */
export function toBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  const block = 3 * 8192;
  for (let i = 0; i < bytes.length; i += block) {
    parts.push(btoa(String.fromCharCode(...bytes.subarray(i, i + block))));
  }
  return parts.join("");
}

/** Decodes strict base64 (no whitespace); throws ArmorError on anything else. */
export function fromBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new ArmorError("armor body is not valid base64");
  }
  const b = Buffer.from(text, "base64"); // native, straight to bytes (the text is checked above)
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function checksum(bytes: Uint8Array): string {
  return checksumLine(crc24(bytes));
}

function checksumLine(c: number): string {
  return "=" + toBase64(new Uint8Array([c >> 16, (c >> 8) & 0xff, c & 0xff]));
}

/**
 * `armorMessage` of a binary message that arrives as a stream, as a stream of the same bytes
 * (exactly `armoredLength` of the message's length), holding one chunk at a time.
 */
export async function* armorChunks(binary: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder();
  yield enc.encode(`${BEGIN}\r\n\r\n`);
  let crc = CRC24_INIT;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of binary) {
      crc = crc24(chunk, crc);
      yield chunk;
    }
  }
  yield* base64LineChunks(counted(), LINE, true);
  yield enc.encode(`${checksumLine(crc)}\r\n${END}\r\n`);
}

/** Armors a binary OpenPGP message: BEGIN, blank line, base64 lines, `=CRC24`, END; all CRLF. */
export function armorMessage(binary: Uint8Array): string {
  const b64 = toBase64(binary);
  const lines: string[] = [BEGIN, ""];
  for (let i = 0; i < b64.length; i += LINE) lines.push(b64.slice(i, i + LINE));
  lines.push(checksum(binary), END, "");
  return lines.join("\r\n");
}

/** Length of the armor's fixed lines (BEGIN, blank line, checksum, END), all with CRLF. */
const ARMOR_FRAME_BYTES = BEGIN.length + 2 + 2 + 7 + END.length + 2;

/** Exact length in bytes of `armorMessage` of a binary message of `n` bytes. */
export function armoredLength(n: number): number {
  const chars = 4 * Math.ceil(n / 3);
  return ARMOR_FRAME_BYTES + chars + 2 * Math.ceil(chars / LINE);
}

/**
 * Reads an armored PGP MESSAGE (LF or CRLF, armor headers allowed, checksum optional but
 * verified when present) and returns the binary message.
 */
export function dearmor(text: string): Uint8Array {
  const lines = text.split(/\r?\n/).map((l) => l.trimEnd());
  const start = lines.indexOf(BEGIN);
  if (start < 0) throw new ArmorError(`no "${BEGIN}" line`);
  const end = lines.indexOf(END, start + 1);
  if (end < 0) throw new ArmorError(`no "${END}" line`);
  let i = start + 1;
  const blank = lines.indexOf("", i);
  if (blank >= 0 && blank < end && lines.slice(i, blank).every((l) => /^[\w-]+: /.test(l))) {
    i = blank + 1; // skip armor headers
  }
  let body = "";
  let crc: string | undefined;
  for (; i < end; i++) {
    const line = lines[i];
    if (line.startsWith("=") && line.length === 5) crc = line;
    else body += line;
  }
  const bytes = fromBase64(body);
  if (crc !== undefined && crc !== checksum(bytes)) {
    throw new ArmorError("armor checksum does not match the message (corrupted in transit?)");
  }
  return bytes;
}
