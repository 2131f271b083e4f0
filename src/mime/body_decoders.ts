/**
 * Content-Transfer-Encoding decoders that work on a body in pieces (base64, quoted-printable,
 * identity), for the streaming parser: each keeps at most a small carry between pieces and writes
 * decoded bytes on to a sink. Same leniency as parser.ts: base64 skips characters outside its
 * alphabet, quoted-printable keeps malformed escapes as they are.
 */
import { Buffer } from "node:buffer";
import { MimeParseError } from "./parser.ts";

/** Where decoded bytes go; a write may wait (a file), which holds the parse back. */
export interface ByteSink {
  write(bytes: Uint8Array): void | Promise<void>;
}

/** Takes an encoded body piece by piece; `end` flushes the carry. */
export interface BodyDecoder {
  write(encoded: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

/** Base64 characters decoded per batch (a multiple of 4). */
const BASE64_BATCH = 64 * 1024;

/** ASCII (and Latin-1) bytes as a string, natively; bytes above 0x7F may map differently. */
const ascii = new TextDecoder("latin1");

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

function view(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Decodes base64 text into one reused buffer (grown when a batch needs more) and returns a view
 * of the bytes: valid until the next call, so a sink copies what it keeps.
 */
export class Base64Into {
  #out = Buffer.alloc(0);
  decode(text: string): Uint8Array {
    const need = Math.ceil(text.length / 4) * 3;
    if (this.#out.length < need) this.#out = Buffer.alloc(Math.max(need, BASE64_BATCH));
    const n = this.#out.write(text, 0, "base64");
    return view(this.#out.subarray(0, n));
  }
}

class Base64Decoder implements BodyDecoder {
  #pending: string[] = [];
  #length = 0;
  readonly #into = new Base64Into();
  constructor(private readonly out: ByteSink) {}

  async write(encoded: Uint8Array): Promise<void> {
    // Only the alphabet counts, so bytes above 0x7F may decode to anything else.
    const clean = ascii.decode(encoded).replace(/[^A-Za-z0-9+/]/g, "");
    if (clean === "") return;
    this.#pending.push(clean);
    this.#length += clean.length;
    if (this.#length >= BASE64_BATCH) await this.#flush(false);
  }

  async #flush(last: boolean): Promise<void> {
    const text = this.#pending.join("");
    const usable = last ? text.length : text.length - (text.length % 4);
    if (last && usable % 4 === 1) throw new MimeParseError("body is not valid base64");
    this.#pending = usable < text.length ? [text.slice(usable)] : [];
    this.#length = text.length - usable;
    if (usable > 0) await this.out.write(this.#into.decode(text.slice(0, usable)));
  }

  async end(): Promise<void> {
    await this.#flush(true);
  }
}

class QuotedPrintableDecoder implements BodyDecoder {
  #carry = "";
  constructor(private readonly out: ByteSink) {}

  async write(encoded: Uint8Array): Promise<void> {
    let text = this.#carry + latin1(encoded);
    // An escape or soft line break cut at the end of this piece waits for the next one.
    const tail = /=(?:[0-9A-Fa-f]|\r)?$/.exec(text);
    this.#carry = tail === null ? "" : tail[0];
    if (tail !== null) text = text.slice(0, tail.index);
    await this.#emit(text);
  }

  async #emit(text: string): Promise<void> {
    if (text === "") return;
    const decoded = text.replace(/=\r?\n/g, "").replace(
      /=([0-9A-Fa-f]{2})/g,
      (_, h) => String.fromCharCode(parseInt(h, 16)),
    );
    await this.out.write(view(Buffer.from(decoded, "latin1")));
  }

  async end(): Promise<void> {
    const rest = this.#carry;
    this.#carry = "";
    await this.#emit(rest);
  }
}

class IdentityDecoder implements BodyDecoder {
  constructor(private readonly out: ByteSink) {}
  async write(encoded: Uint8Array): Promise<void> {
    await this.out.write(encoded);
  }
  async end(): Promise<void> {}
}

/** The decoder for a Content-Transfer-Encoding value (7bit, 8bit, binary and unknown: identity). */
export function bodyDecoder(encoding: string | undefined, out: ByteSink): BodyDecoder {
  switch ((encoding ?? "7bit").trim().toLowerCase()) {
    case "base64":
      return new Base64Decoder(out);
    case "quoted-printable":
      return new QuotedPrintableDecoder(out);
    default:
      return new IdentityDecoder(out);
  }
}
