/**
 * Base64 in fixed-width CRLF lines over a stream of bytes, a bounded piece at a time: the MIME
 * body of a file (76 columns) and the ASCII armor's body (64 columns) of any size.
 */
import { Buffer } from "node:buffer";

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
  const encode = (bytes: Uint8Array): Uint8Array => {
    const b64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
    const lines: string[] = [];
    for (let i = 0; i < b64.length; i += lineChars) lines.push(b64.slice(i, i + lineChars));
    const text = lastCrlf
      ? lines.map((l) => `${l}\r\n`).join("")
      : (first ? "" : "\r\n") + lines.join("\r\n");
    first = false;
    return new TextEncoder().encode(text);
  };
  for await (const chunk of source) {
    const all = rest.length === 0 ? chunk : concat(rest, chunk);
    const whole = all.length - (all.length % lineBytes);
    if (whole > 0) yield encode(all.subarray(0, whole));
    rest = all.slice(whole);
  }
  if (rest.length > 0) yield encode(rest);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
