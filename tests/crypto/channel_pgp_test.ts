/** Tests of channel_pgp.ts: Delta Chat's channel-post encryption, checked by OpenPGP.js. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { encryptForChannel, ocbEncrypt, saltedSkesk } from "../../src/crypto/channel_pgp.ts";

const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)));

Deno.test("ocbEncrypt() refuses what the SKESK never needs (other nonces, partial blocks)", () => {
  const key = hex("000102030405060708090A0B0C0D0E0F");
  const block = new Uint8Array(16);
  assert.throws(() => ocbEncrypt(key, hex("BBAA99887766554433221104"), block, new Uint8Array()));
  assert.throws(() => ocbEncrypt(key, new Uint8Array(15), new Uint8Array(8), new Uint8Array()));
  assert.equal(ocbEncrypt(key, new Uint8Array(15), block, new Uint8Array(4)).length, 32);
});

Deno.test("a salted SKESK and the post it opens are read by OpenPGP.js with the secret", async () => {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: "ecc",
    curve: "curve25519Legacy",
    userIDs: [{ email: "owner@relay.test" }],
    format: "object",
  });
  const secret = "kQpV4Hi0iS7ccQjX-B-GTj3AH_crcGxhYqaaUukCl6q";
  const bytes = await encryptForChannel({
    plaintext: new TextEncoder().encode("channel post ✓"),
    secret,
    signingKey: privateKey,
  });
  const message = await openpgp.readMessage({ binaryMessage: bytes });
  const skesks = message.packets.filterByTag(openpgp.enums.packet.symEncryptedSessionKey);
  assert.equal(skesks.length, 1, "exactly one SKESK");
  assert.equal((skesks[0] as unknown as { version: number }).version, 6);
  const s2k = (skesks[0] as unknown as { s2k: { type: string } }).s2k;
  assert.equal(s2k.type, "salted");
  const out = await openpgp.decrypt({
    message,
    passwords: [secret],
    verificationKeys: publicKey,
    format: "binary",
    expectSigned: true,
  });
  assert.equal(new TextDecoder().decode(out.data as Uint8Array), "channel post ✓");
  await assert.rejects(() =>
    openpgp.readMessage({ binaryMessage: bytes }).then((m) =>
      openpgp.decrypt({ message: m, passwords: ["wrong"] })
    )
  );
});

Deno.test("saltedSkesk() writes version 6, AES-128, OCB, Salted SHA-256 with an 8-byte salt", () => {
  const p = saltedSkesk("pw", new Uint8Array(16), (n) => new Uint8Array(n).fill(7));
  assert.deepEqual([...p.subarray(0, 9)], [0xc3, p.length - 2, 6, 3 + 10 + 15, 7, 2, 10, 1, 8]);
  assert.equal(p.length, 2 + 5 + 10 + 15 + 32);
});
