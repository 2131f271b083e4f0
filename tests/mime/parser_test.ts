/** Tests of parser.ts against real Delta Chat mail (tests/fixtures/deltachat) and hostile input. */
import assert from "node:assert/strict";
import { parsePublicKeyFromAutocrypt } from "./_autocrypt.ts";
import {
  decodeEncodedWords,
  leaves,
  MimeParseError,
  parseMime,
  parseParamValue,
  partText,
} from "../../src/mime/parser.ts";

const fixture = (name: string) =>
  Deno.readFileSync(new URL(`../fixtures/deltachat/${name}`, import.meta.url));

Deno.test("parseMime() reads Delta Chat's inner text message: protected headers and text", () => {
  const m = parseMime(fixture("009-text.decrypted.txt"));
  assert.equal(m.contentType.value, "text/plain");
  assert.equal(m.contentType.params["protected-headers"], "v1");
  assert.equal(m.headers.get("chat-version"), "1.0");
  assert.equal(m.headers.get("from"), '"Alice" <lvs408ke6@_relay.test>');
  assert.equal(m.headers.getAll("hp-outer").length, 6);
  assert.match(partText(m), /\S/);
});

Deno.test("parseMime() reads a file message: text part, then the attachment's bytes and name", () => {
  const m = parseMime(fixture("011-file.decrypted.txt"));
  const [text, file] = leaves(m);
  assert.equal(partText(text).trim(), "see attachment");
  assert.equal(file.disposition?.value, "attachment");
  assert.equal(file.disposition?.params.filename, "report.txt");
  const content = new TextDecoder().decode(file.body);
  assert.ok(content.startsWith("Quarterly report\nxxx"), content.slice(0, 30));
  assert.doesNotMatch(content, /=\r?\n/, "soft line breaks removed");
});

Deno.test("parseMime() reads an MDN: the report part names the original message", () => {
  const m = parseMime(fixture("012-mdn.decrypted.txt"));
  assert.equal(m.contentType.value, "multipart/report");
  assert.equal(m.contentType.params["report-type"], "disposition-notification");
  const report = leaves(m).find((p) => p.contentType.value === "message/disposition-notification")!;
  const fields = parseMime(report.body).headers;
  assert.equal(
    fields.get("original-message-id"),
    "<7ad9ccbb-200d-4b49-b0c2-5c94c8637d43@localhost>",
  );
  assert.match(fields.get("disposition") ?? "", /displayed$/);
});

Deno.test("parseMime() reads the plaintext vc-request with its Autocrypt key", async () => {
  const m = parseMime(fixture("005-vc-request.eml"));
  assert.equal(m.headers.get("secure-join"), "vc-request");
  assert.equal(m.headers.get("secure-join-invitenumber"), "avcafDm2TOqYHDb1aVKtMJpe");
  assert.equal(partText(leaves(m)[0]).trim(), "Secure-Join: vc-request");
  const fpr = await parsePublicKeyFromAutocrypt(
    m.headers.get("autocrypt")!,
    "94j28k7fr@_relay.test",
  );
  assert.match(fpr, /^[0-9A-F]{40}$/);
});

Deno.test("parseParamValue() and decodeEncodedWords() handle RFC 2231 and RFC 2047", () => {
  const p = parseParamValue(`attachment; filename*0*=utf-8''R%C3%A9sum; filename*1*=%C3%A9.pdf`);
  assert.equal(p.params.filename, "Résumé.pdf");
  assert.equal(
    parseParamValue('text/plain; charset="UTF-8"; format=flowed').params.charset,
    "UTF-8",
  );
  assert.equal(decodeEncodedWords("=?utf-8?B?w6RiYw==?= =?UTF-8?Q?_d=C3=A9f?="), "äbc déf");
});

Deno.test("parseMime() keeps 8-bit bytes 0x80-0xFF exact in binary bodies", () => {
  const body = new Uint8Array(256).map((_, i) => i);
  const head = new TextEncoder().encode(
    "Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n",
  );
  const raw = new Uint8Array([...head, ...body]);
  assert.deepEqual(parseMime(raw).body, body);
});

Deno.test("parseMime() turns hostile input into MimeParseError quickly", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const cases: [Uint8Array, RegExp][] = [
    [enc(`Subject: ${"x".repeat(300_000)}\r\n\r\nbody`), /header section is/],
    [enc("Content-Type: multipart/mixed\r\n\r\n--x\r\n\r\n"), /without a boundary/],
    [enc('Content-Type: multipart/mixed; boundary="b"\r\n\r\nno delimiter here'), /never occurs/],
    [enc("Content-Transfer-Encoding: base64\r\n\r\nA"), /not valid base64/],
    [
      enc(
        `Content-Type: multipart/mixed; boundary="b"\r\n\r\n` + "--b\r\n\r\nx\r\n".repeat(2000) +
          "--b--",
      ),
      /more than 500 MIME parts/,
    ],
  ];
  let nested = "x";
  for (let i = 0; i < 50; i++) {
    nested =
      `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${nested}\r\n--b${i}--`;
  }
  cases.push([enc(nested), /nesting deeper than 12/]);
  for (const [raw, re] of cases) {
    assert.throws(
      () => parseMime(raw),
      (e: Error) => e instanceof MimeParseError && re.test(e.message),
    );
  }
  // Garbage base64 characters are skipped, as mail clients do.
  assert.deepEqual(
    parseMime(enc("Content-Transfer-Encoding: base64\r\n\r\naGk!!\r\n")).body,
    enc("hi"),
  );
});

Deno.test("parseMime() does not take a longer boundary (b10) for a delimiter of b1 (RFC 2046)", () => {
  const raw = [
    'Content-Type: multipart/mixed; boundary="b1"',
    "",
    "--b1",
    'Content-Type: multipart/alternative; boundary="b10"',
    "",
    "--b10",
    "Content-Type: text/plain",
    "",
    "inner",
    "--b10--",
    "--b1 ",
    "Content-Type: text/plain",
    "",
    "second",
    "--b1--",
    "",
  ].join("\r\n");
  const root = parseMime(new TextEncoder().encode(raw));
  assert.equal(root.parts.length, 2);
  assert.equal(root.parts[0].parts.length, 1);
  assert.equal(partText(root.parts[0].parts[0]), "inner");
  assert.equal(partText(root.parts[1]), "second");
});
