/**
 * Tests of the streamed sign-then-encrypt: the length it announces is the length it writes, and
 * the message decrypts for every recipient and self with a valid signature, as OpenPGP.js reads it.
 */
import assert from "node:assert/strict";
import { armorChunks, armoredLength, dearmor } from "../../src/crypto/armor.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { decryptMessage, readPrivateKey } from "../../src/crypto/pgp.ts";
import { encryptAndSignStream, packetHeader } from "../../src/crypto/pgp_stream.ts";
import { isValidArmoredMessage } from "../../scripts/relay/filter_check.mjs";

Deno.test("encryptAndSignStream: exact length, readable by each key, signed, relay-conforming", async () => {
  const [a, b, c] = await Promise.all(
    ["a", "b", "c"].map(async (n) =>
      await readPrivateKey((await generateAccountKey(`${n}@x.test`)).privateKey)
    ),
  );
  for (const size of [0, 1, 15, 16, 17, 191, 192, 8383, 8384, 100_003]) {
    const data = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
    const plaintext = {
      bytes: size,
      async *open() {
        for (let i = 0; i < size; i += 4099) yield data.subarray(i, i + 4099);
      },
    };
    const enc = await encryptAndSignStream({
      plaintext,
      recipients: [b.toPublic(), c.toPublic()],
      signingKey: a,
    });
    const parts: Uint8Array[] = [];
    for await (const p of armorChunks(enc.chunks)) parts.push(p);
    const armored = new TextDecoder().decode(await new Blob(parts as BlobPart[]).bytes());
    assert.equal(armored.length, armoredLength(enc.bytes), `${size} B: the announced length`);
    assert.ok(isValidArmoredMessage(armored), `${size} B: the relay takes it`);
    for (const key of [b, c, a]) {
      const d = await decryptMessage(dearmor(armored), key);
      assert.deepEqual(d.plaintext, data, `${size} B`);
      const check = await d.verify([a.toPublic()]);
      assert.equal(check.valid, true, `${size} B: ${JSON.stringify(check)}`);
    }
  }
});

Deno.test("encryptAndSignStream refuses a plaintext that is not the length it claimed", async () => {
  const key = await readPrivateKey((await generateAccountKey("a@x.test")).privateKey);
  const enc = await encryptAndSignStream({
    plaintext: {
      bytes: 10,
      async *open() {
        yield new Uint8Array(11);
      },
    },
    recipients: [],
    signingKey: key,
  });
  await assert.rejects(async () => {
    for await (const _ of enc.chunks) { /* drain */ }
  }, /changed while it was encrypted/);
});

Deno.test("packetHeader writes one-, two- and five-octet lengths", () => {
  assert.deepEqual([...packetHeader(18, 191)], [0xd2, 191]);
  assert.deepEqual([...packetHeader(18, 192)], [0xd2, 192, 0]);
  assert.deepEqual([...packetHeader(18, 8383)], [0xd2, 223, 255]);
  assert.deepEqual([...packetHeader(18, 8384)], [0xd2, 255, 0, 0, 0x20, 0xc0]);
});
