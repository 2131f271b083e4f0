/**
 * Lines of a byte source, each with its line end, in bounded memory: one buffer, reused and grown
 * only for a long line; a line longer than the limit ends the read with a MimeParseError (mail
 * lines are short; RFC 5322 says 998 bytes). A line is a view into that buffer: it is valid until
 * the next `next()`, so a reader copies what it keeps.
 */
import { Buffer } from "node:buffer";
import { MimeParseError } from "./parser.ts";

/** One line: its bytes without the line end, and the line end itself ('' at the end of data). */
export interface Line {
  readonly text: Uint8Array;
  readonly eol: Uint8Array;
}

/** Something read into a caller's buffer (a `Deno.FsFile`, or bytes in memory). */
export interface ByteSource {
  /** Reads into `p`; the count read, or null at the end. */
  read(p: Uint8Array): Promise<number | null>;
  close(): void;
}

/** Longest line accepted (the armor and base64 bodies use 64–76 characters). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** The buffer's first size, and the least room left for one read. */
const BUFFER_BYTES = 256 * 1024;
const MIN_READ = 64 * 1024;
/**
 * The most bytes {@link LineReader.nextBlock} returns: what a reader turns into one string stays
 * below V8's large-object size, so it is young garbage, collected cheaply and soon.
 */
const BLOCK_BYTES = 64 * 1024;

const CRLF = new Uint8Array([13, 10]);
const DASH = 45;
/** A line break followed by a line that starts with `-`. */
const NL_DASH = new Uint8Array([10, DASH]);
const LF = new Uint8Array([10]);
const NONE = new Uint8Array();

/** A pull reader of lines with one line of push-back (a parser that looked one line too far). */
export class LineReader {
  #buf = new Uint8Array(BUFFER_BYTES);
  #at = 0;
  #end = 0;
  #done = false;
  #back: Line | undefined;
  readonly #pull: (room: Uint8Array) => Promise<number | null>;
  readonly #stop: (reason?: unknown) => Promise<void>;
  /** Bytes of a stream chunk not yet copied into the buffer. */
  #pending: Uint8Array = NONE;

  constructor(
    source: ReadableStream<Uint8Array> | ByteSource,
    private readonly maxLine = MAX_LINE_BYTES,
  ) {
    if (source instanceof ReadableStream) {
      const reader = source.getReader();
      this.#pull = async (room) => {
        if (this.#pending.length === 0) {
          const { value, done } = await reader.read();
          if (done) return null;
          this.#pending = value;
        }
        const n = Math.min(room.length, this.#pending.length);
        room.set(this.#pending.subarray(0, n));
        this.#pending = this.#pending.subarray(n);
        return n;
      };
      this.#stop = (reason) => reader.cancel(reason).catch(() => {});
    } else {
      this.#pull = (room) => source.read(room);
      let open = true;
      this.#stop = () => {
        if (open) source.close();
        open = false;
        return Promise.resolve();
      };
    }
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
    let searched = this.#at;
    for (;;) {
      const nl = this.#buf.subarray(searched, this.#end).indexOf(10);
      if (nl >= 0) {
        const at = searched + nl;
        const cr = at > this.#at && this.#buf[at - 1] === 13;
        const line = { text: this.#buf.subarray(this.#at, cr ? at - 1 : at), eol: cr ? CRLF : LF };
        this.#at = at + 1;
        return line;
      }
      if (this.#end - this.#at > this.maxLine) {
        throw new MimeParseError(`a line longer than ${this.maxLine} bytes`);
      }
      if (this.#done) {
        if (this.#at >= this.#end) return undefined;
        const text = this.#buf.subarray(this.#at, this.#end);
        this.#at = this.#end;
        return { text, eol: NONE };
      }
      searched = this.#end - this.#at;
      this.#compact();
      const n = await this.#pull(this.#buf.subarray(this.#end));
      if (n === null) this.#done = true;
      else this.#end += n;
    }
  }

  /**
   * Several whole lines at once, none of which starts with `-` (so none is a MIME delimiter):
   * `text` holds them with the line ends between them, `eol` the last one's end. A line that
   * starts with `-` comes alone, as from {@link next}. For reading a long body in big pieces.
   */
  async nextBlock(): Promise<Line | undefined> {
    if (this.#back !== undefined) return await this.next();
    for (;;) {
      if (this.#at < this.#end && this.#buf[this.#at] === DASH) return await this.next();
      const view = this.#buf.subarray(this.#at, Math.min(this.#end, this.#at + BLOCK_BYTES));
      const dash = Buffer.from(view.buffer, view.byteOffset, view.byteLength).indexOf(NL_DASH);
      const nl = dash >= 0 ? dash : view.lastIndexOf(10);
      if (nl >= 0) {
        const cr = nl > 0 && view[nl - 1] === 13;
        const line = { text: view.subarray(0, cr ? nl - 1 : nl), eol: cr ? CRLF : LF };
        this.#at += nl + 1;
        return line;
      }
      if (this.#done || this.#end - this.#at > BLOCK_BYTES) return await this.next();
      this.#compact();
      const n = await this.#pull(this.#buf.subarray(this.#end));
      if (n === null) this.#done = true;
      else this.#end += n;
    }
  }

  /** Moves the unread bytes to the front, growing the buffer when little room is left. */
  #compact(): void {
    const rest = this.#end - this.#at;
    if (this.#buf.length - rest < MIN_READ) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(this.#at, this.#end));
      this.#buf = bigger;
    } else if (this.#at > 0) {
      this.#buf.copyWithin(0, this.#at, this.#end);
    }
    this.#at = 0;
    this.#end = rest;
  }

  /** Stops reading (the source is cancelled or closed). */
  async cancel(reason?: unknown): Promise<void> {
    await this.#stop(reason);
  }
}
