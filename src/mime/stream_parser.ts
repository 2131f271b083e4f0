/**
 * Streaming MIME parser for received mail of any size: reads a message line by line and builds
 * the same tree as parser.ts, but each leaf's decoded body goes to a sink the caller picks from
 * the leaf's headers (a bounded buffer by default, a file for an attachment, nothing for a part
 * that does not matter). Memory holds one line, a header section and the buffered leaves, never
 * the message. The limits of parser.ts hold (header size, parts, depth), and lines are bounded.
 */
import { bodyDecoder, type ByteSink } from "./body_decoders.ts";
import { type ByteSource, type Line, LineReader } from "./line_reader.ts";
import {
  checkEntityBudget,
  entityHead,
  MIME_LIMITS,
  type MimeHeaders,
  MimeParseError,
  type MimePart,
  type ParamValue,
  parseHeaderBlock,
  type SpooledBody,
} from "./parser.ts";

/** What a leaf looks like before its body is read (what a sink is picked by). */
export interface LeafInfo {
  readonly headers: MimeHeaders;
  readonly contentType: ParamValue;
  readonly disposition?: ParamValue;
  /** Content types of the multiparts around it, outermost first. */
  readonly ancestors: readonly string[];
}

/** Where one leaf's decoded body goes, and what the leaf keeps of it when it ends. */
export interface BodySink extends ByteSink {
  /** The body is complete: the bytes the leaf keeps, or where it was spooled. */
  end(): Promise<{ body: Uint8Array; spooled?: SpooledBody }>;
  /** The parse failed: let go of anything held (a temp file is removed). */
  abort(): Promise<void>;
}

/** Picks the sink of a leaf. */
export type SinkChooser = (leaf: LeafInfo) => BodySink;

/** Default bound of a leaf kept in memory (text, receipts, keys): far above any chat text. */
export const MAX_BUFFERED_PART_BYTES = 4 * 1024 * 1024;

/** Keeps a leaf in memory, at most `limit` bytes; more is a MimeParseError. */
export function bufferSink(limit = MAX_BUFFERED_PART_BYTES): BodySink {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    write(bytes) {
      size += bytes.byteLength;
      if (size > limit) {
        throw new MimeParseError(
          `a message part larger than ${limit} bytes (the limit for a part kept in memory)`,
        );
      }
      chunks.push(bytes.slice());
    },
    end() {
      const body = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        body.set(c, at);
        at += c.byteLength;
      }
      return Promise.resolve({ body });
    },
    abort: () => Promise.resolve(),
  };
}

/** Drops a leaf's body (a part nobody reads). */
export function discardSink(): BodySink {
  return {
    write() {},
    end: () => Promise.resolve({ body: new Uint8Array() }),
    abort: () => Promise.resolve(),
  };
}

const DASH = 45;

/** The boundary a line delimits, if any: `--b` opens a part, `--b--` closes the multipart. */
function delimiterOf(
  line: Line,
  boundaries: readonly string[],
): { boundary: string; close: boolean } | undefined {
  const t = line.text;
  if (t.length < 3 || t[0] !== DASH || t[1] !== DASH) return undefined;
  let end = t.length;
  while (end > 2 && (t[end - 1] === 32 || t[end - 1] === 9)) end--;
  let text = "";
  for (let i = 2; i < end; i++) text += String.fromCharCode(t[i]);
  // Innermost first: a nested boundary shadows nothing, but the nearest is the likeliest.
  for (let i = boundaries.length - 1; i >= 0; i--) {
    const b = boundaries[i];
    if (text === b) return { boundary: b, close: false };
    if (text === `${b}--`) return { boundary: b, close: true };
  }
  return undefined;
}

function latin1(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return s;
}

class StreamParser {
  #parts = 0;
  /** Sinks of leaves whose bodies were spooled, to abort on failure. */
  readonly #sinks: BodySink[] = [];

  constructor(private readonly lines: LineReader, private readonly choose: SinkChooser) {}

  async #headers(boundaries: readonly string[]): Promise<MimeHeaders> {
    const lines: string[] = [];
    let size = 0;
    for (;;) {
      const line = await this.lines.next();
      if (line === undefined) break;
      if (delimiterOf(line, boundaries) !== undefined) {
        this.lines.unread(line);
        break;
      }
      if (line.text.length === 0) break;
      size += line.text.length + line.eol.length;
      if (size > MIME_LIMITS.maxHeaderBytes) {
        throw new MimeParseError(
          `header section is over ${size} bytes, over the ${MIME_LIMITS.maxHeaderBytes} limit`,
        );
      }
      lines.push(latin1(line.text));
    }
    return parseHeaderBlock(lines.join("\n"));
  }

  async entity(depth: number, boundaries: readonly string[], ancestors: string[]) {
    checkEntityBudget(depth, ++this.#parts);
    const part = entityHead(await this.#headers(boundaries));
    const { contentType, headers } = part;
    if (contentType.value.startsWith("multipart/")) {
      const boundary = contentType.params.boundary;
      if (!boundary) throw new MimeParseError(`${contentType.value} without a boundary parameter`);
      const parts = await this.#multipart(depth, [...boundaries, boundary], [
        ...ancestors,
        contentType.value,
      ]);
      return { ...part, body: new Uint8Array(), parts } satisfies MimePart;
    }
    const sink = this.choose({ ...part, ancestors });
    this.#sinks.push(sink);
    const decoder = bodyDecoder(headers.get("content-transfer-encoding"), sink);
    let eol: Uint8Array | undefined;
    for (;;) {
      const line = await this.lines.nextBlock();
      if (line === undefined) break;
      if (delimiterOf(line, boundaries) !== undefined) {
        this.lines.unread(line);
        eol = undefined; // the line break before a delimiter belongs to it
        break;
      }
      if (eol !== undefined && eol.length > 0) await decoder.write(eol);
      if (line.text.length > 0) await decoder.write(line.text);
      eol = line.eol;
    }
    if (eol !== undefined && eol.length > 0) await decoder.write(eol);
    await decoder.end();
    const { body, spooled } = await sink.end();
    return { ...part, body, parts: [], ...(spooled === undefined ? {} : { spooled }) };
  }

  async #multipart(
    depth: number,
    boundaries: readonly string[],
    ancestors: string[],
  ): Promise<MimePart[]> {
    const own = boundaries[boundaries.length - 1];
    const parts: MimePart[] = [];
    let seen = false;
    for (;;) {
      const line = await this.lines.next();
      if (line === undefined) break;
      const d = delimiterOf(line, boundaries);
      if (d === undefined) continue; // preamble or epilogue
      if (d.boundary !== own) {
        this.lines.unread(line); // an outer multipart goes on
        break;
      }
      seen = true;
      if (d.close) {
        // The epilogue runs to the outer delimiter or the end.
        for (;;) {
          const rest = await this.lines.next();
          if (rest === undefined) break;
          if (delimiterOf(rest, boundaries.slice(0, -1)) !== undefined) {
            this.lines.unread(rest);
            break;
          }
        }
        break;
      }
      parts.push(await this.entity(depth + 1, boundaries, ancestors));
    }
    if (!seen) throw new MimeParseError(`multipart boundary "${own}" never occurs`);
    return parts;
  }

  async abort(): Promise<void> {
    await Promise.all(this.#sinks.map((s) => s.abort().catch(() => {})));
  }
}

/**
 * Parses a whole message from `source`, each leaf's body into the sink `choose` picks; the source
 * is closed (or cancelled) at the end. Throws MimeParseError for input beyond the limits (every
 * sink is then aborted); an error of the source or of a sink passes through. Sinks get views
 * that are valid during the call (and the promise it returns): they copy what they keep.
 */
export async function parseMimeStream(
  source: ReadableStream<Uint8Array> | ByteSource,
  choose: SinkChooser = () => bufferSink(),
): Promise<MimePart> {
  const lines = new LineReader(source);
  const parser = new StreamParser(lines, choose);
  try {
    const root = await parser.entity(0, [], []);
    // Anything after the root (only possible after a delimiter of no multipart) is not read.
    await lines.cancel();
    return root;
  } catch (err) {
    await parser.abort();
    await lines.cancel(err);
    throw err;
  }
}
