/**
 * Lines of a byte stream, each with its line end, in bounded memory: a line longer than the
 * limit ends the read with a MimeParseError (mail lines are short; RFC 5322 says 998 bytes).
 */
import { MimeParseError } from "./parser.ts";

/** One line: its bytes without the line end, and the line end itself ('' at the end of data). */
export interface Line {
  readonly text: Uint8Array;
  readonly eol: Uint8Array;
}

/** Longest line accepted (the armor and base64 bodies use 64–76 characters). */
export const MAX_LINE_BYTES = 1024 * 1024;

const CRLF = new Uint8Array([13, 10]);
const LF = new Uint8Array([10]);
const NONE = new Uint8Array();

/** A pull reader of lines with one line of push-back (a parser that looked one line too far). */
export class LineReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buf: Uint8Array = NONE;
  #at = 0;
  #done = false;
  #back: Line | undefined;

  constructor(source: ReadableStream<Uint8Array>, private readonly maxLine = MAX_LINE_BYTES) {
    this.#reader = source.getReader();
  }

  /** Gives `line` back: the next `next()` returns it again. */
  unread(line: Line): void {
    this.#back = line;
  }

  /** The next line, or undefined at the end of the data. */
  async next(): Promise<Line | undefined> {
    if (this.#back !== undefined) {
      const line = this.#back;
      this.#back = undefined;
      return line;
    }
    for (;;) {
      const nl = this.#buf.indexOf(10, this.#at);
      if (nl >= 0) {
        const cr = nl > this.#at && this.#buf[nl - 1] === 13;
        const line = {
          text: this.#buf.subarray(this.#at, cr ? nl - 1 : nl),
          eol: cr ? CRLF : LF,
        };
        this.#at = nl + 1;
        return line;
      }
      if (this.#buf.length - this.#at > this.maxLine) {
        throw new MimeParseError(`a line longer than ${this.maxLine} bytes`);
      }
      if (this.#done) {
        if (this.#at >= this.#buf.length) return undefined;
        const text = this.#buf.subarray(this.#at);
        this.#at = this.#buf.length;
        return { text, eol: NONE };
      }
      const { value, done } = await this.#reader.read();
      if (done) {
        this.#done = true;
        continue;
      }
      const rest = this.#buf.subarray(this.#at);
      if (rest.length === 0) this.#buf = value;
      else {
        const joined = new Uint8Array(rest.length + value.length);
        joined.set(rest);
        joined.set(value, rest.length);
        this.#buf = joined;
      }
      this.#at = 0;
    }
  }

  /** Stops reading (the source is cancelled). */
  async cancel(reason?: unknown): Promise<void> {
    await this.#reader.cancel(reason).catch(() => {});
  }
}
