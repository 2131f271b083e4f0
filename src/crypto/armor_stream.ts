/**
 * Reads an armored PGP MESSAGE piece by piece, as dearmor() in armor.ts reads it whole (LF or
 * CRLF, armor headers skipped, the CRC-24 checksum verified when present): base64 lines are
 * decoded in batches and written on, so memory holds one batch, never the message.
 */
import { Buffer } from "node:buffer";
import { Base64Into } from "../mime/body_decoders.ts";
import { ARMOR_BEGIN, ARMOR_END, ArmorError, crc24, CRC24_INIT } from "./armor.ts";

/** Where the binary message goes; a write may wait, which holds the reading back. */
export interface BinarySink {
  write(bytes: Uint8Array): void | Promise<void>;
}

/** Base64 characters decoded per batch (a multiple of 4). */
const BATCH = 64 * 1024;
/** Longest armor line kept while it is incomplete (armor lines have 64 characters). */
const MAX_LINE = 64 * 1024;

type State = "before" | "headers" | "body" | "done";

/** Whole lines of base64 text (trailing blanks allowed, as `trimEnd` reads a line). */
const BASE64_LINES = /^(?:[A-Za-z0-9+/]*[ \t\r]*\n)*$/;

/** Feeds armor text in; `end()` checks the checksum and that the END line came. */
export class ArmorDecoder {
  #state: State = "before";
  #carry = "";
  #pending: string[] = [];
  #pendingLength = 0;
  #padded = false;
  #length = 0;
  #crc = CRC24_INIT;
  #checksum: string | undefined;
  /** Lines seen since BEGIN that may be armor headers (kept until the blank line decides). */
  #maybeHeaders: string[] = [];
  readonly #into = new Base64Into();
  readonly #ascii = new TextDecoder("latin1");

  constructor(private readonly out: BinarySink) {}

  /** Armor text (any piece: lines may be cut anywhere; a view the decoder does not keep). */
  async write(text: Uint8Array): Promise<void> {
    if (this.#state === "done") return;
    // The streaming parser writes a line, then its line end: no split needed for either.
    if (text.indexOf(10) < 0) {
      this.#carry += this.#ascii.decode(text);
      if (this.#carry.length > MAX_LINE) throw new ArmorError("an armor line is too long");
      return;
    }
    if (text.length <= 2 && text[text.length - 1] === 10) {
      const line = this.#carry;
      this.#carry = "";
      return await this.#line(line.trimEnd());
    }
    const s = this.#carry + this.#ascii.decode(text);
    if (await this.#bodyLines(s)) return;
    const lines = s.split("\n");
    this.#carry = lines.pop()!;
    if (this.#carry.length > MAX_LINE) throw new ArmorError("an armor line is too long");
    for (const line of lines) {
      await this.#line(line.trimEnd());
      if (this.done) return;
    }
  }

  /**
   * Many body lines at once (the common case: a block of base64 lines), without a string per
   * line: only when no line in `s` can be anything else (no `-`, `=` or `:`), the rest as before.
   * True when `s` was taken.
   */
  async #bodyLines(s: string): Promise<boolean> {
    if (this.#state !== "body" || this.#padded) return false;
    if (s.includes("-") || s.includes("=") || s.includes(":")) return false;
    const last = s.lastIndexOf("\n");
    const whole = s.slice(0, last + 1);
    if (!BASE64_LINES.test(whole)) throw new ArmorError("armor body is not valid base64");
    this.#carry = s.slice(last + 1);
    const clean = whole.replace(/[^A-Za-z0-9+/]/g, "");
    this.#pending.push(clean);
    this.#pendingLength += clean.length;
    if (this.#pendingLength >= BATCH) await this.#flush(false);
    return true;
  }

  async #line(line: string): Promise<void> {
    switch (this.#state) {
      case "before":
        if (line === ARMOR_BEGIN) this.#state = "headers";
        return;
      case "headers":
        if (line === "" && this.#maybeHeaders.every((l) => /^[\w-]+: /.test(l))) {
          this.#maybeHeaders = [];
          this.#state = "body";
          return;
        }
        if (/^[\w-]+: /.test(line) && line !== ARMOR_END) {
          this.#maybeHeaders.push(line);
          return;
        }
        // No blank line after them: what looked like headers is body text (as dearmor reads it).
        this.#state = "body";
        for (const held of this.#maybeHeaders.splice(0)) await this.#body(held);
        return await this.#body(line);
      case "body":
        return await this.#body(line);
      case "done":
        return;
    }
  }

  async #body(line: string): Promise<void> {
    if (line === ARMOR_END) {
      await this.#flush(true);
      this.#state = "done";
      return;
    }
    if (line.startsWith("=") && line.length === 5) {
      this.#checksum = line;
      return;
    }
    if (line === "") return;
    if (this.#padded || !/^[A-Za-z0-9+/]*={0,2}$/.test(line)) {
      throw new ArmorError("armor body is not valid base64");
    }
    if (line.endsWith("=")) this.#padded = true;
    this.#pending.push(line);
    this.#pendingLength += line.length;
    if (this.#pendingLength >= BATCH) await this.#flush(false);
  }

  async #flush(last: boolean): Promise<void> {
    const text = this.#pending.join("");
    const usable = last ? text.length : text.length - (text.length % 4);
    if (last && usable % 4 !== 0) throw new ArmorError("armor body is not valid base64");
    this.#pending = usable < text.length ? [text.slice(usable)] : [];
    this.#pendingLength = text.length - usable;
    if (usable === 0) return;
    const bytes = this.#into.decode(text.slice(0, usable));
    this.#crc = crc24(bytes, this.#crc);
    this.#length += bytes.length;
    await this.out.write(bytes);
  }

  /** The armor is complete: throws ArmorError when it was not (or its checksum is wrong). */
  async end(): Promise<void> {
    if (this.#state !== "done" && this.#carry !== "") {
      const last = this.#carry;
      this.#carry = "";
      await this.#line(last.trimEnd());
    }
    if (this.#state === "before") throw new ArmorError(`no "${ARMOR_BEGIN}" line`);
    if (this.#state !== "done") throw new ArmorError(`no "${ARMOR_END}" line`);
    if (this.#checksum !== undefined) {
      const c = this.#crc;
      const expected = "=" +
        Buffer.from([c >> 16, (c >> 8) & 0xff, c & 0xff]).toString("base64");
      if (this.#checksum !== expected) {
        throw new ArmorError("armor checksum does not match the message (corrupted in transit?)");
      }
    }
  }

  /** True once the END line was read (what follows it is ignored). */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Bytes of binary message written so far. */
  get bytes(): number {
    return this.#length;
  }
}
