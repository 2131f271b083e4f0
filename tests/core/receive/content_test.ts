/** Tests of reading text, files, pre/post-message fields and receipts out of received MIME. */
import assert from "node:assert/strict";
import { chatContent, receiptContent, viewtypeOfMime } from "../../../src/core/receive/content.ts";
import type { ReadMail } from "../../../src/core/receive/mail_reader.ts";
import { parseMime } from "../../../src/mime/parser.ts";

function mail(text: string): ReadMail {
  const content = parseMime(new TextEncoder().encode(text.replace(/\n/g, "\r\n")));
  return {
    messageId: "m@x",
    from: { addr: "a@x", name: "" },
    headers: content.headers,
    content,
    encrypted: true,
    gossip: [],
    sentAt: 0,
  };
}

Deno.test("chatContent() reads Delta Chat's pre-message: text, post-message id, file metadata", () => {
  const c = chatContent(mail(
    'Chat-Version: 1.0\nChat-Post-Message-ID: <post@x>\nchat-post-message-metadata: {"size":307200,"viewtype":"File","filename":"big.bin"}\nContent-Type: text/plain; charset="utf-8"\n\nthe text\n',
  ));
  assert.deepEqual(c, {
    text: "the text",
    quote: "",
    systemType: undefined,
    file: undefined,
    viewtype: undefined,
    postMessageId: "post@x",
    announcedFile: { name: "big.bin", bytes: 307200, viewtype: "File" },
  });
});

Deno.test("chatContent() reads a post-message: empty text part plus the attachment", () => {
  const c = chatContent(mail(
    'Chat-Version: 1.0\nChat-Is-Post-Message: 1\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n\n--b\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename="../../etc/big.bin"\nContent-Transfer-Encoding: base64\n\nAAEC\n--b--\n',
  ));
  assert.equal(c.text, "");
  assert.deepEqual(c.file, {
    name: "big.bin",
    mime: "application/octet-stream",
    bytes: new Uint8Array([0, 1, 2]),
  });
  assert.equal(c.viewtype, "File");
  assert.equal(c.postMessageId, undefined);
});

Deno.test("chatContent() prefixes the subject when the mail is not a chat message (no Chat-Version)", () => {
  assert.equal(
    chatContent(mail("Subject: Hello\nContent-Type: text/plain\n\nbody\n")).text,
    "Hello – body",
  );
  assert.equal(chatContent(mail("Chat-Version: 1.0\nSubject: Hello\n\nbody\n")).text, "body");
});

Deno.test("receiptContent() reads Original- and Additional-Message-IDs and the disposition", () => {
  const r = receiptContent(mail(
    'Content-Type: multipart/report; report-type=disposition-notification; boundary="b"\n\n--b\nContent-Type: text/plain\n\nreceipt\n--b\nContent-Type: message/disposition-notification\n\nOriginal-Message-ID: <m1@x>\nAdditional-Message-IDs: <m2@x> <m3@x>\nDisposition: manual-action/MDN-sent-automatically; displayed\n--b--\n',
  ));
  assert.deepEqual(r, { messageIds: ["m1@x", "m2@x", "m3@x"], disposition: "displayed" });
  assert.equal(receiptContent(mail("Content-Type: text/plain\n\nx\n")), undefined);
});

Deno.test("viewtypeOfMime() maps images, GIFs, audio, voice, video and the rest", () => {
  assert.deepEqual(
    ["image/png", "image/gif", "audio/ogg", "video/mp4", "application/pdf"].map((m) =>
      viewtypeOfMime(m)
    ),
    ["Image", "Gif", "Audio", "Video", "File"],
  );
  assert.equal(viewtypeOfMime("audio/ogg", true), "Voice");
});
