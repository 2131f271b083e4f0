/** Tests of pgp.ts: round trip, wrong key, tampering, zip bomb, signature checks. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import {
  decryptMessage,
  decryptStream,
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

/** `bytes` as a stream of `size`-byte chunks. */
function chunked(bytes: Uint8Array, size = 4096): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
      c.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of stream) parts.push(p);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

Deno.test("decryptStream() yields the plaintext and verifies the one-pass signature after it", async () => {
  const plaintext = new Uint8Array(300_000).map((_, i) => i % 251);
  for (const compress of [false, true]) {
    const ct = await encryptAndSign({
      plaintext,
      recipients: [bob.pub],
      signingKey: alice.priv,
      compress,
    });
    const d = await decryptStream(chunked(ct), bob.priv);
    assert.deepEqual(await readAll(d.data), plaintext);
    assert.deepEqual(await d.verify([eve.pub, alice.pub]), {
      valid: true,
      signerFingerprint: alice.fpr,
    });
    await assert.rejects(d.verify([alice.pub]), /once/);
  }
});

Deno.test("decryptStream() names another signer, and an unsigned message", async () => {
  const ct = await encryptAndSign({ plaintext: text, recipients: [bob.pub], signingKey: eve.priv });
  const d = await decryptStream(chunked(ct), bob.priv);
  await readAll(d.data);
  const other = await d.verify([alice.pub]);
  assert.equal(!other.valid && other.failure, "unknown_signer");
  const unsigned = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: text }),
    encryptionKeys: bob.pub,
    format: "binary",
  }) as Uint8Array;
  const u = await decryptStream(chunked(unsigned), bob.priv);
  await readAll(u.data);
  const none = await u.verify([alice.pub]);
  assert.equal(!none.valid && none.failure, "unsigned");
});

Deno.test("decryptStream() ends the data with an error for a wrong key, tampering or a bomb", async () => {
  const plaintext = new Uint8Array(200_000).map((_, i) => i % 13);
  const ct = await encryptAndSign({ plaintext, recipients: [bob.pub], signingKey: alice.priv });
  await assert.rejects(decryptStream(chunked(ct), eve.priv), PgpError);
  // A flipped bit inside the literal data: the data stream fails at its end (integrity check).
  const tampered = ct.slice();
  tampered[tampered.length - 5000] ^= 1;
  const d = await decryptStream(chunked(tampered), bob.priv);
  await assert.rejects(readAll(d.data), /Modification detected/);
  const bomb = await encryptAndSign({
    plaintext: new Uint8Array(4 * 1024 * 1024),
    recipients: [bob.pub],
    signingKey: alice.priv,
    compress: true,
  });
  const b = await decryptStream(chunked(bomb), bob.priv, 1024 * 1024);
  await assert.rejects(readAll(b.data));
});
