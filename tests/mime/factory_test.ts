/** Tests of factory.ts: rendered messages parse back to what went in, in Delta Chat's shape. */
import assert from "node:assert/strict";
import { parseAutocrypt } from "../../src/crypto/autocrypt_header.ts";
import {
  base64LinesLength,
  filenameParam,
  formatMailbox,
  type InnerBase,
  renderChatMessage,
  renderReadReceipt,
  renderSecureJoinStep,
} from "../../src/mime/factory.ts";
import { leaves, parseMime, partText } from "../../src/mime/parser.ts";

const key = new Uint8Array(300).map((_, i) => i & 0xff);
const base: InnerBase = {
  from: { addr: "gw@relay.test", name: "Edge Gateway" },
  to: [{ addr: "bob@relay.test", name: "Bob" }],
  messageId: "<11111111-2222-4333-8444-555555555555@localhost>",
  date: new Date(Date.UTC(2026, 10, 22, 12, 0, 0)),
  subject: "Message from Edge Gateway",
  autocryptKey: key,
  boundary: "bnd",
};
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function assertWellFormed(raw: Uint8Array) {
  const text = dec(raw);
  assert.doesNotMatch(text, /[^\r]\n/, "CRLF only");
  for (const line of text.split("\r\n")) assert.ok(line.length <= 998, "RFC 5322 line limit");
}

Deno.test("renderChatMessage() text: protected headers, Chat-Version, Autocrypt, exact UTF-8 text", () => {
  const raw = renderChatMessage({
    ...base,
    text: "Hello ✓\nsecond line",
    extra: [["Chat-Disposition-Notification-To", "gw@relay.test"]],
  });
  assertWellFormed(raw);
  const m = parseMime(raw);
  assert.equal(m.contentType.params["hp"], "cipher");
  assert.equal(m.headers.get("chat-version"), "1.0");
  assert.equal(m.headers.get("from"), '"Edge Gateway" <gw@relay.test>');
  assert.equal(m.headers.get("chat-disposition-notification-to"), "gw@relay.test");
  assert.deepEqual(parseAutocrypt(m.headers.get("autocrypt")!)?.keydata, key);
  assert.equal(partText(m), "Hello ✓\r\nsecond line");
});

Deno.test("renderChatMessage() with a file: text first, then the attachment with its name and bytes", () => {
  const bytes = new Uint8Array(5000).map((_, i) => (i * 7) & 0xff);
  const raw = renderChatMessage({
    ...base,
    text: "see attachment",
    file: { name: "Résumé 2026.pdf", mime: "application/pdf", bytes },
  });
  assertWellFormed(raw);
  const [text, file] = leaves(parseMime(raw));
  assert.equal(partText(text), "see attachment");
  assert.equal(file.contentType.value, "application/pdf");
  assert.equal(file.disposition?.params.filename, "Résumé 2026.pdf");
  assert.deepEqual(file.body, bytes);
});

Deno.test("renderReadReceipt() writes an MDN Delta Chat maps to the original message", () => {
  const raw = renderReadReceipt({
    ...base,
    subject: "Receipt Notification",
    originalMessageIds: ["<a@localhost>", "<b@localhost>"],
  });
  assertWellFormed(raw);
  const m = parseMime(raw);
  assert.equal(m.contentType.value, "multipart/report");
  assert.equal(m.headers.get("auto-submitted"), "auto-replied");
  const fields = parseMime(leaves(m)[1].body).headers;
  assert.equal(fields.get("original-message-id"), "<a@localhost>");
  assert.equal(fields.get("additional-message-ids"), "<b@localhost>");
  assert.match(fields.get("disposition")!, /displayed$/);
});

Deno.test("renderSecureJoinStep() carries the step, its headers and gossip for the peer", () => {
  const peerKey = new Uint8Array(100).fill(7);
  const raw = renderSecureJoinStep({
    ...base,
    step: "vc-auth-required",
    gossip: [{ addr: "bob@relay.test", keydata: peerKey }],
  });
  const m = parseMime(raw);
  assert.equal(m.headers.get("secure-join"), "vc-auth-required");
  const gossip = parseAutocrypt(m.headers.get("autocrypt-gossip")!)!;
  assert.equal(gossip.addr, "bob@relay.test");
  assert.deepEqual(gossip.keydata, peerKey);
  assert.equal(partText(m).trim(), "Secure-Join: vc-auth-required");
});

Deno.test("formatMailbox() and filenameParam() escape what needs escaping", () => {
  assert.equal(formatMailbox({ addr: "a@b.c" }), "<a@b.c>");
  assert.equal(formatMailbox({ addr: "a@b.c", name: 'Say "hi"' }), '"Say \\"hi\\"" <a@b.c>');
  assert.match(formatMailbox({ addr: "a@b.c", name: "Zoë" }), /^=\?utf-8\?B\?.+\?= <a@b\.c>$/);
  assert.equal(filenameParam("report.txt"), 'filename="report.txt"');
  assert.equal(filenameParam("ü.txt"), "filename*=utf-8''%C3%BC.txt");
});

Deno.test("base64LinesLength is the exact size of an attachment body of n bytes", () => {
  const body = (n: number) => {
    const text = new TextDecoder().decode(renderChatMessage({
      from: { addr: "a@x.test" },
      to: [{ addr: "b@x.test" }],
      messageId: "<m@x.test>",
      date: new Date(0),
      subject: "s",
      autocryptKey: new Uint8Array(1),
      boundary: "B",
      text: "",
      file: { name: "f", mime: "application/octet-stream", bytes: new Uint8Array(n).fill(1) },
    }));
    return text.slice(text.lastIndexOf("base64\r\n\r\n") + 10, text.lastIndexOf("\r\n--B--"));
  };
  for (const n of [0, 1, 56, 57, 58, 114, 1000]) {
    assert.equal(base64LinesLength(n), body(n).length, `${n} bytes`);
  }
});
