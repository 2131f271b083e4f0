/** Tests of line_reader.ts: lines across chunks, line ends kept, push-back and the length bound. */
import assert from "node:assert/strict";
import { LineReader } from "../../src/mime/line_reader.ts";

function stream(pieces: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of pieces) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

async function all(r: LineReader): Promise<[string, string][]> {
  const dec = new TextDecoder();
  const out: [string, string][] = [];
  for (let l = await r.next(); l !== undefined; l = await r.next()) {
    out.push([dec.decode(l.text), dec.decode(l.eol)]);
  }
  return out;
}

Deno.test("LineReader splits CRLF and LF lines across chunks and keeps a last unended line", async () => {
  const r = new LineReader(stream(["ab", "c\r", "\nd\n\n", "e\r\nf"]));
  assert.deepEqual(await all(r), [["abc", "\r\n"], ["d", "\n"], ["", "\n"], ["e", "\r\n"], [
    "f",
    "",
  ]]);
});

Deno.test("LineReader.unread() gives the same line back once", async () => {
  const r = new LineReader(stream(["x\ny\n"]));
  const x = (await r.next())!;
  r.unread(x);
  assert.deepEqual(await all(r), [["x", "\n"], ["y", "\n"]]);
});

Deno.test("LineReader refuses a line longer than its bound", async () => {
  const r = new LineReader(stream(["a".repeat(50), "b".repeat(50), "\n"]), 64);
  await assert.rejects(r.next(), /longer than 64 bytes/);
});

Deno.test("LineReader.nextBlock() gives whole lines at once, a line starting with '-' alone", async () => {
  const r = new LineReader(stream(["a\r\nb\r", "\nc\n--x\n-y\nd\ne"]));
  assert.deepEqual(await all({ next: () => r.nextBlock() } as LineReader), [
    ["a", "\r\n"], // all the first chunk held
    ["b\r\nc", "\n"],
    ["--x", "\n"],
    ["-y", "\n"],
    ["d", "\n"],
    ["e", ""],
  ]);
});

Deno.test("LineReader reads a ByteSource into its own buffer and closes it", async () => {
  const bytes = new TextEncoder().encode("one\ntwo\n".repeat(50_000));
  let at = 0, closed = 0;
  const r = new LineReader({
    read(p) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(p.length, 1000, bytes.length - at);
      p.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
    close: () => void closed++,
  });
  let lines = 0;
  for (let l = await r.next(); l !== undefined; l = await r.next()) lines++;
  await r.cancel();
  await r.cancel();
  assert.deepEqual([lines, closed], [100_000, 1]);
});
