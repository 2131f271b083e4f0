/** Tests of armor.ts against OpenPGP.js and the relay's own acceptance rules. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { armoredLength, ArmorError, armorMessage, crc24, dearmor } from "../../src/crypto/armor.ts";
// The test relay's filter (the chatmail acceptance check) is the judge of what the relay takes.
import { isValidArmoredMessage } from "../../scripts/relay/filter_check.mjs";

async function encryptTo(aead: boolean): Promise<Uint8Array> {
  const { privateKey } = await openpgp.generateKey({
    userIDs: [{ email: "a@example.org" }],
    format: "object",
    config: { aeadProtect: aead },
  });
  return await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: new TextEncoder().encode("hello\r\n") }),
    encryptionKeys: privateKey.toPublic(),
    format: "binary",
  }) as Uint8Array;
}

Deno.test("crc24() equals the checksum OpenPGP.js writes for a SEIPDv1 message", async () => {
  const binary = await encryptTo(false);
  const theirs = openpgp.armor(
    openpgp.enums.armor.message,
    binary,
    undefined,
    undefined,
    undefined,
    true,
  );
  const line = theirs.split("\n").find((l) => /^=[A-Za-z0-9+/]{4}$/.test(l))!;
  const c = crc24(binary);
  assert.equal(line, "=" + btoa(String.fromCharCode(c >> 16, (c >> 8) & 0xff, c & 0xff)));
});

Deno.test("armorMessage() writes CRLF, no headers, 64-char lines and a CRC line, even for SEIPDv2", async () => {
  const binary = await encryptTo(true);
  const text = armorMessage(binary);
  assert.ok(text.startsWith("-----BEGIN PGP MESSAGE-----\r\n\r\n"));
  assert.ok(text.endsWith("-----END PGP MESSAGE-----\r\n"));
  assert.doesNotMatch(text, /[^\r]\n/);
  const lines = text.split("\r\n");
  assert.ok(lines.slice(2, -4).every((l) => l.length === 64));
  assert.match(lines.at(-3)!, /^=[A-Za-z0-9+/]{4}$/);
  assert.equal(isValidArmoredMessage(text.trimEnd()), true, "the relay filter accepts it");
  assert.deepEqual(dearmor(text), binary);
  const read = await openpgp.readMessage({ armoredMessage: text });
  assert.ok(read.packets.length >= 2);
});

Deno.test("dearmor() reads LF armor with headers and rejects a wrong checksum or junk", async () => {
  const binary = await encryptTo(false);
  const lf = openpgp.armor(openpgp.enums.armor.message, binary, undefined, undefined, "a comment");
  assert.deepEqual(dearmor(lf), binary);
  const broken = armorMessage(binary).replace(/\r\n=[A-Za-z0-9+/]{4}\r\n/, "\r\n=AAAA\r\n");
  assert.throws(() => dearmor(broken), ArmorError);
  assert.throws(() => dearmor("hello"), /no "-----BEGIN PGP MESSAGE-----" line/);
  assert.throws(
    () => dearmor("-----BEGIN PGP MESSAGE-----\n\n%%%\n-----END PGP MESSAGE-----"),
    /not valid base64/,
  );
});

Deno.test("armoredLength is the exact length of armorMessage for every remainder and line end", () => {
  for (const n of [0, 1, 2, 3, 47, 48, 49, 95, 96, 97, 1000, 4097]) {
    const bytes = new Uint8Array(n).fill(0xa5);
    assert.equal(armoredLength(n), armorMessage(bytes).length, `${n} bytes`);
  }
});
