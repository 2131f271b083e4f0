/**
 * Tests of stream_parser.ts: the same tree as parseMime() (parser.ts) for real and synthetic
 * mail whatever the chunking, leaves routed to the sinks the caller picks, and the same limits.
 */
import assert from "node:assert/strict";
import {
  leaves,
  MIME_LIMITS,
  MimeParseError,
  type MimePart,
  parseMime,
} from "../../src/mime/parser.ts";
import {
  type BodySink,
  bufferSink,
  discardSink,
  parseMimeStream,
} from "../../src/mime/stream_parser.ts";

const fixture = (name: string) =>
  Deno.readFileSync(new URL(`../fixtures/deltachat/${name}`, import.meta.url));
const enc = new TextEncoder();

function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
      c.close();
    },
  });
}

/** A tree as plain values (headers, types, bodies), to compare two parses. */
function shape(p: MimePart): unknown {
  return {
    headers: p.headers.entries(),
    type: p.contentType,
    disposition: p.disposition,
    body: [...p.body],
    parts: p.parts.map(shape),
  };
}

const SYNTHETIC = [
  "Subject: plain\r\n\r\nbody line 1\r\nbody line 2\r\n",
  "Subject: no body",
  "Content-Type: multipart/mixed; boundary=b1\n\npreamble\n--b1\nContent-Type: text/plain\n\none\n" +
  "--b10\nnot a delimiter\n--b1\nContent-Type: application/octet-stream\n" +
  "Content-Transfer-Encoding: base64\n\naGVs\nbG8=\n--b1--\nepilogue\n",
  'Content-Type: multipart/mixed; boundary="o"\r\n\r\n--o\r\n' +
  'Content-Type: multipart/alternative; boundary="i"\r\n\r\n--i\r\n' +
  "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
  "caf=C3=A9 =\r\nsoft\r\n--i\r\nContent-Type: text/html\r\n\r\n<p>x</p>\r\n--i--\r\n" +
  '--o\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename="a.png"\r\n' +
  "Content-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--o--\r\n",
  // No closing delimiter: the last part runs to the end.
  "Content-Type: multipart/mixed; boundary=x\n\n--x\nX-A: 1\n\nfirst\n--x\nX-B: 2\n\nsecond\n",
];

Deno.test("parseMimeStream() builds the tree parseMime() builds, whatever the chunk size", async () => {
  const inputs = [
    fixture("009-text.decrypted.txt"),
    fixture("011-file.decrypted.txt"),
    fixture("012-mdn.decrypted.txt"),
    fixture("005-vc-request.eml"),
    ...SYNTHETIC.map((s) => enc.encode(s)),
  ];
  for (const input of inputs) {
    const want = shape(parseMime(input));
    for (const size of [1, 7, 4096, input.length]) {
      assert.deepEqual(shape(await parseMimeStream(chunked(input, size))), want);
    }
  }
});

Deno.test("parseMimeStream() hands each leaf to the sink chosen from its headers", async () => {
  const written: number[] = [];
  const spool = (): BodySink => ({
    write: (b) => void written.push(...b),
    end: () =>
      Promise.resolve({
        body: new Uint8Array(),
        spooled: { path: "/tmp/x", bytes: written.length, sha256: "00" },
      }),
    abort: () => Promise.resolve(),
  });
  const tree = await parseMimeStream(
    chunked(enc.encode(SYNTHETIC[3]), 5),
    (leaf) => {
      if (leaf.disposition?.value === "attachment") return spool();
      if (leaf.contentType.value === "text/html") return discardSink();
      assert.deepEqual(leaf.ancestors, ["multipart/mixed", "multipart/alternative"]);
      return bufferSink();
    },
  );
  const [text, html, png] = leaves(tree);
  assert.equal(new TextDecoder().decode(text.body), "café soft");
  assert.equal(html.body.length, 0);
  assert.equal(png.body.length, 0);
  assert.deepEqual(png.spooled, { path: "/tmp/x", bytes: 8, sha256: "00" });
  assert.deepEqual(written, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
});

Deno.test("parseMimeStream() keeps the limits of parseMime() and aborts the sinks it opened", async () => {
  const huge = "X-Big: " + "a".repeat(MIME_LIMITS.maxHeaderBytes) + "\r\n\r\nbody";
  await assert.rejects(parseMimeStream(chunked(enc.encode(huge), 4096)), /header section/);
  await assert.rejects(
    parseMimeStream(chunked(enc.encode("Content-Type: multipart/mixed\n\nx"), 10)),
    /without a boundary/,
  );
  await assert.rejects(
    parseMimeStream(chunked(enc.encode("Content-Type: multipart/mixed; boundary=q\n\nx\n"), 3)),
    /never occurs/,
  );
  let nested = "";
  for (let i = 0; i <= MIME_LIMITS.maxDepth + 1; i++) {
    nested += `Content-Type: multipart/mixed; boundary=d${i}\n\n--d${i}\n`;
  }
  await assert.rejects(parseMimeStream(chunked(enc.encode(nested), 64)), MimeParseError);
  let many = "Content-Type: multipart/mixed; boundary=m\n\n";
  for (let i = 0; i <= MIME_LIMITS.maxParts; i++) many += "--m\n\nx\n";
  await assert.rejects(parseMimeStream(chunked(enc.encode(many), 4096)), /more than/);
  // A part kept in memory past its bound, after an attachment sink was opened: that is aborted.
  let aborted = 0;
  const mail = "Content-Type: multipart/mixed; boundary=z\n\n--z\n" +
    "Content-Disposition: attachment\n\nfile\n--z\n\n" + "t".repeat(100) + "\n--z--\n";
  await assert.rejects(
    parseMimeStream(
      chunked(enc.encode(mail), 16),
      (leaf) =>
        leaf.disposition === undefined ? bufferSink(50) : {
          ...bufferSink(),
          abort: () => Promise.resolve(void aborted++),
        },
    ),
    /larger than 50 bytes/,
  );
  assert.equal(aborted, 1);
});
