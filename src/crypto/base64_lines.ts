/**
 * Base64 in fixed-width CRLF lines over a stream of bytes, a bounded piece at a time: the MIME
 * body of a file (76 columns) and the ASCII armor's body (64 columns) of any size. Each piece is
 * encoded straight into one byte array (no strings), so a large file leaves little garbage.
 */

import { SEND_STREAM_GC } from "../memory/young_gc.ts";

const ALPHABET = new TextEncoder().encode(
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
);
const PAD = 61; // "="
const CR = 13;
const LF = 10;

/**
 * `bytes` (whole lines of `lineBytes` input bytes, but for the last piece) as base64 lines of
 * `lineChars` characters: CRLF after each line, or with `lastCrlf` false between lines only
 * (`leadingCrlf`: this piece continues earlier lines).
 */
function encodeLines(
  bytes: Uint8Array,
  lineChars: number,
  lastCrlf: boolean,
  leadingCrlf: boolean,
): Uint8Array {
  const chars = 4 * Math.ceil(bytes.length / 3);
  const lines = Math.ceil(chars / lineChars);
  const breaks = lastCrlf ? lines : lines - 1 + (leadingCrlf ? 1 : 0);
  const out = new Uint8Array(chars + 2 * breaks);
  let o = 0;
  if (!lastCrlf && leadingCrlf) {
    out[o++] = CR;
    out[o++] = LF;
  }
  const lineBytes = (lineChars / 4) * 3;
  for (let start = 0; start < bytes.length; start += lineBytes) {
    const end = Math.min(start + lineBytes, bytes.length);
    let i = start;
    for (; i + 3 <= end; i += 3) {
      const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      out[o++] = ALPHABET[n >> 18];
      out[o++] = ALPHABET[(n >> 12) & 63];
      out[o++] = ALPHABET[(n >> 6) & 63];
      out[o++] = ALPHABET[n & 63];
    }
    if (i < end) {
      const two = i + 1 < end;
      const n = (bytes[i] << 16) | (two ? bytes[i + 1] << 8 : 0);
      out[o++] = ALPHABET[n >> 18];
      out[o++] = ALPHABET[(n >> 12) & 63];
      out[o++] = two ? ALPHABET[(n >> 6) & 63] : PAD;
      out[o++] = PAD;
    }
    if (lastCrlf || end < bytes.length) {
      out[o++] = CR;
      out[o++] = LF;
    }
  }
  return out;
}

/**
 * Yields the base64 of every byte of `source` in lines of `lineChars` characters (a multiple of
 * 4), each line followed by CRLF, or, with `lastCrlf` false, CRLF between lines only. Holds at
 * most one input chunk and the few bytes that do not fill a line.
 */
export async function* base64LineChunks(
  source: AsyncIterable<Uint8Array>,
  lineChars: number,
  lastCrlf: boolean,
): AsyncGenerator<Uint8Array> {
  const lineBytes = (lineChars / 4) * 3;
  let rest = new Uint8Array(0);
  let first = true;
  for await (const chunk of source) {
    let all = chunk;
    if (rest.length > 0) {
      all = new Uint8Array(rest.length + chunk.length);
      all.set(rest);
      all.set(chunk, rest.length);
    }
    const whole = all.length - (all.length % lineBytes);
    if (whole > 0) {
      yield encodeLines(all.subarray(0, whole), lineChars, lastCrlf, !first);
      first = false;
    }
    SEND_STREAM_GC.note(chunk.length);
    rest = all.slice(whole);
  }
  if (rest.length > 0) yield encodeLines(rest, lineChars, lastCrlf, !first);
}
