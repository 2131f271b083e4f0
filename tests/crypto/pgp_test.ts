/** Tests of pgp.ts: round trip, wrong key, tampering, zip bomb, signature checks. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import {
  decryptMessage,
  encryptAndSign,
  fingerprintOf,
  PgpError,
  readPrivateKey,
  readPublicKey,
} from "../../src/crypto/pgp.ts";

async function party(addr: string) {
  const k = await generateAccountKey(addr);
  return {
    priv: await readPrivateKey(k.privateKey),
    pub: await readPublicKey(k.publicKey),
    fpr: k.fingerprint,
  };
}
const alice = await party("alice@example.org");
const bob = await party("bob@example.org");
const eve = await party("eve@example.org");
const text = new TextEncoder().encode("Chat-Version: 1.0\r\n\r\nhello ✓\r\n");

Deno.test("encryptAndSign() → decryptMessage() round trip for the recipient and for self, signer verified", async () => {
  const ct = await encryptAndSign({
    plaintext: text,
    recipients: [bob.pub],
    signingKey: alice.priv,
  });
  for (const reader of [bob.priv, alice.priv]) {
    const d = await decryptMessage(ct, reader);
    assert.deepEqual(d.plaintext, text);
    assert.deepEqual(await d.verify([alice.pub]), { valid: true, signerFingerprint: alice.fpr });
  }
  assert.equal(fingerprintOf(alice.pub), alice.fpr);
});

Deno.test("recipient key IDs are anonymous (wildcard), as Delta Chat writes them", async () => {
  const ct = await encryptAndSign({
    plaintext: text,
    recipients: [bob.pub],
    signingKey: alice.priv,
  });
  const msg = await openpgp.readMessage({ binaryMessage: ct });
  const ids = msg.getEncryptionKeyIDs().map((id) => id.toHex());
  assert.ok(ids.length === 2 && ids.every((id) => /^0+$/.test(id)), ids.join());
});

Deno.test("decryptMessage() refuses a wrong key and tampered ciphertext with PgpError", async () => {
  const ct = await encryptAndSign({
    plaintext: text,
    recipients: [bob.pub],
    signingKey: alice.priv,
  });
  await assert.rejects(decryptMessage(ct, eve.priv), PgpError);
  const tampered = ct.slice();
  tampered[tampered.length - 10] ^= 0xff;
  await assert.rejects(decryptMessage(tampered, bob.priv), PgpError);
});

Deno.test("verify() names a signature by someone else and an unsigned message", async () => {
  const ct = await encryptAndSign({ plaintext: text, recipients: [bob.pub], signingKey: eve.priv });
  const other = await (await decryptMessage(ct, bob.priv)).verify([alice.pub]);
  assert.equal(other.valid, false);
  assert.equal(!other.valid && other.failure, "unknown_signer");
  const unsigned = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: text }),
    encryptionKeys: bob.pub,
    format: "binary",
  }) as Uint8Array;
  const none = await (await decryptMessage(unsigned, bob.priv)).verify([alice.pub]);
  assert.equal(!none.valid && none.failure, "unsigned");
});

Deno.test("decryptMessage() stops a compressed bomb at the size limit", async () => {
  const bomb = await encryptAndSign({
    plaintext: new Uint8Array(8 * 1024 * 1024),
    recipients: [bob.pub],
    signingKey: alice.priv,
    compress: true,
  });
  assert.ok(bomb.length < 100_000, `compressed to ${bomb.length} bytes`);
  await assert.rejects(decryptMessage(bomb, bob.priv, 1024 * 1024), PgpError);
  assert.equal((await decryptMessage(bomb, bob.priv)).plaintext.length, 8 * 1024 * 1024);
});
