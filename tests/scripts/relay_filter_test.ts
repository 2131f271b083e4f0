/**
 * Unit tests of the relay's acceptance rules (scripts/relay/filter_check.mjs), the chatmail
 * filtermail rules of docs/protocol-notes.md §1.3, without any relay running.
 */
import assert from "node:assert/strict";
import {
  checkOutgoing,
  isEncryptedPacketSequence,
  isValidArmoredMessage,
  readPacketHeader,
  REPLY_UNENCRYPTED,
} from "../../scripts/relay/filter_check.mjs";
import {
  armorMessage,
  encryptedMail,
  encryptToFreshKey,
  plainMail,
  secureJoinRequest,
} from "./fixtures/mail.ts";

const A = "alice@_relay.test";
const B = "bob@_relay.test";
const bytes = (...b: number[]) => new Uint8Array(b);
/** PKESK (tag 1) then SEIPD (tag 18), both with one-octet new-format lengths. */
const MINIMAL = bytes(0xc1, 2, 0, 0, 0xd2, 1, 0);

Deno.test("checkOutgoing() accepts OpenPGP.js output armored with a CRC-24 line", async () => {
  const armored = armorMessage(await encryptToFreshKey("hi"));
  assert.equal(checkOutgoing(A, [B], encryptedMail(A, B, armored)), null);
});

Deno.test("checkOutgoing() refuses plaintext with 523 and a From mismatch with 500", () => {
  assert.equal(checkOutgoing(A, [B], plainMail(A, B)), REPLY_UNENCRYPTED);
  assert.match(
    checkOutgoing(A, [B], plainMail(B, B)) ?? "",
    /^500 Invalid FROM <bob@_relay\.test>/,
  );
  assert.match(checkOutgoing(A, [B], "Subject: no from\r\n\r\nx\r\n") ?? "", /^500 /);
  const named = plainMail(`"Alice, A." <ALICE@_relay.test>`, B);
  assert.equal(checkOutgoing(A, [B], named), REPLY_UNENCRYPTED, "From matched case-insensitively");
});

Deno.test("checkOutgoing() lets SecureJoin vc-request and vg-request through, nothing else", () => {
  assert.equal(checkOutgoing(A, [B], secureJoinRequest(A, B)), null);
  assert.equal(checkOutgoing(A, [B], secureJoinRequest(A, B, "vg-request")), null);
  assert.equal(
    checkOutgoing(A, [B], secureJoinRequest(A, B, "vc-auth-required")),
    REPLY_UNENCRYPTED,
  );
  const twoParts = secureJoinRequest(A, B).replace(
    "--sj--",
    "--sj\r\nContent-Type: text/plain\r\n\r\nmore\r\n--sj--",
  );
  assert.equal(checkOutgoing(A, [B], twoParts), REPLY_UNENCRYPTED);
  const chatty = secureJoinRequest(A, B).replace(
    "\r\nSecure-Join: vc-request\r\n--sj--",
    "\r\nhi\r\n--sj--",
  );
  assert.equal(checkOutgoing(A, [B], chatty), REPLY_UNENCRYPTED);
});

Deno.test("checkOutgoing() refuses malformed PGP/MIME", () => {
  const good = armorMessage(MINIMAL);
  assert.equal(checkOutgoing(A, [B], encryptedMail(A, B, good)), null);
  const variants = [
    encryptedMail(A, B, good).replace("\r\n\r\nVersion: 1", "\r\n\r\nVersion: 2"),
    encryptedMail(A, B, good).replace("application/octet-stream", "text/plain"),
    encryptedMail(A, B, good).replace("multipart/encrypted", "multipart/mixed"),
    encryptedMail(A, B, good).replace("--b0--", "--b0\r\n\r\nthird\r\n--b0--"),
    encryptedMail(A, B, good).replace("--b0--", "--b0"), // no closing delimiter
    encryptedMail(A, B, good.replace("\r\n\r\n", "\r\nVersion: OpenPGP.js\r\n\r\n")),
    encryptedMail(A, B, good.replaceAll("\r\n", "\n")),
  ];
  for (const raw of variants) assert.equal(checkOutgoing(A, [B], raw), REPLY_UNENCRYPTED, raw);
});

Deno.test("isValidArmoredMessage() strips from the last '=' before the strict base64 decode", () => {
  assert.equal(isValidArmoredMessage(armorMessage(MINIMAL)), true);
  // 7 bytes end in "==" padding: without the CRC line, the cut removes one "=" and breaks it
  assert.equal(isValidArmoredMessage(armorMessage(MINIMAL, { checksum: false })), false);
  const sixBytes = bytes(0xc1, 1, 0, 0xd2, 1, 0);
  assert.equal(isValidArmoredMessage(armorMessage(sixBytes, { checksum: false })), true);
  assert.equal(isValidArmoredMessage(armorMessage(MINIMAL).replace("wQ", "w!")), false);
});

Deno.test("isEncryptedPacketSequence() wants PKESK/SKESK packets and one final SEIPD", () => {
  assert.equal(isEncryptedPacketSequence(MINIMAL), true);
  assert.equal(isEncryptedPacketSequence(bytes(0xc3, 1, 0, 0xd2, 1, 0)), true, "SKESK");
  assert.equal(isEncryptedPacketSequence(bytes(0xd2, 1, 0)), true, "SEIPD alone");
  assert.equal(isEncryptedPacketSequence(bytes(0xd2, 1, 0, 0xc1, 1, 0)), false, "SEIPD not last");
  assert.equal(isEncryptedPacketSequence(bytes(0xc1, 1, 0)), false, "no SEIPD");
  assert.equal(isEncryptedPacketSequence(bytes(0xcb, 1, 0, 0xd2, 1, 0)), false, "literal data");
  assert.equal(isEncryptedPacketSequence(bytes(0xc1, 5, 0, 0xd2)), false, "length past the end");
  assert.equal(isEncryptedPacketSequence(bytes(0xc1, 2, 0, 0, 0xd2)), false, "truncated header");
  assert.equal(isEncryptedPacketSequence(bytes()), false, "empty");
  // SEIPD with a partial body length chunk (0xe1: 2 bytes), then a final one-octet length
  assert.equal(isEncryptedPacketSequence(bytes(0xc1, 1, 0, 0xd2, 0xe1, 7, 7, 1, 7)), true);
  // two-octet (192..8383) and five-octet lengths
  const two = new Uint8Array(3 + 200);
  two.set([0xd2, 0xc0, 200 - 192]);
  assert.equal(isEncryptedPacketSequence(two), true);
  assert.equal(isEncryptedPacketSequence(bytes(0xd2, 0xff, 0, 0, 0, 2, 9, 9)), true);
});

Deno.test("readPacketHeader() reads old-format headers; the filter refuses them like filtermail", () => {
  // old format: 0x84 = tag 1, one-octet length; 0x85 = tag 1, two-octet length
  assert.deepEqual(readPacketHeader(bytes(0x84, 1, 0), 0), { tag: 1, end: 3, newFormat: false });
  assert.deepEqual(readPacketHeader(bytes(0x85, 0, 1, 0), 0), { tag: 1, end: 4, newFormat: false });
  assert.deepEqual(readPacketHeader(bytes(0xa4, 1, 0), 0), { tag: 9, end: 3, newFormat: false });
  assert.equal(readPacketHeader(bytes(0x40), 0), null, "bit 7 clear: not a packet");
  assert.equal(isEncryptedPacketSequence(bytes(0x84, 1, 0, 0xd2, 1, 0)), false);
});

Deno.test("checkOutgoing() allows a self-sent Autocrypt Setup Message", () => {
  const raw = [
    `From: ${A}`,
    `To: ${A}`,
    "Subject: Autocrypt Setup Message",
    'Content-Type: multipart/mixed; boundary="x"',
    "",
    "--x",
    "Content-Type: text/plain",
    "",
    "setup",
    "--x--",
    "",
  ].join("\r\n");
  assert.equal(checkOutgoing(A, [A], raw), null);
  assert.equal(checkOutgoing(A, [B], raw.replace(`To: ${A}`, `To: ${B}`)), REPLY_UNENCRYPTED);
});
