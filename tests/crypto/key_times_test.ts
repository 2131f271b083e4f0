/**
 * Tests of key_times.ts and of the dates pgp.ts and keygen.ts use: our signatures are never older
 * than our key (a clock set back behind the key's birth still sends), keys from the future are
 * valid recipients, and a new key is dated by the earlier of our clock and the relay's, less a day.
 * Every case goes through encrypt, decrypt and verify with clocks injected.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { encryptionDate, newestKeyTime, signingDate } from "../../src/crypto/key_times.ts";
import { generateAccountKey, KEY_BACKDATE_MS, keyCreationTime } from "../../src/crypto/keygen.ts";
import {
  decryptMessage,
  encryptAndSign,
  readPrivateKey,
  readPublicKey,
} from "../../src/crypto/pgp.ts";

const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;
const NOW = Math.floor(Date.now() / SECOND) * SECOND;

async function party(addr: string, createdAt?: Date) {
  const k = await generateAccountKey(addr, createdAt);
  return {
    priv: await readPrivateKey(k.privateKey),
    pub: await readPublicKey(k.publicKey),
    fpr: k.fingerprint,
  };
}

/** The creation time of the signature inside an encrypted, signed message. */
async function signatureTime(ciphertext: Uint8Array, reader: openpgp.PrivateKey): Promise<number> {
  const message = await openpgp.readMessage({ binaryMessage: ciphertext });
  const { signatures } = await openpgp.decrypt({
    message,
    decryptionKeys: reader,
    date: null as unknown as Date,
  });
  const sig = await signatures[0].signature;
  return sig.packets[0].created!.getTime();
}

const text = new TextEncoder().encode("Chat-Version: 1.0\r\n\r\nhello\r\n");
const bob = await party("bob@example.org", new Date(NOW - DAY));

Deno.test("newestKeyTime() is the key's latest own packet time; signingDate() never precedes it", async () => {
  const ahead = await party("ahead@example.org", new Date(NOW + 10 * DAY));
  assert.equal(newestKeyTime(ahead.pub).getTime(), NOW + 10 * DAY);
  assert.equal(signingDate(ahead.priv, NOW).getTime(), NOW + 10 * DAY, "clock behind the key");
  assert.equal(signingDate(ahead.priv, NOW + 20 * DAY).getTime(), NOW + 20 * DAY);
  assert.equal(encryptionDate([bob.pub, ahead.pub], NOW).getTime(), NOW + 10 * DAY);
  assert.equal(encryptionDate([bob.pub], NOW).getTime(), NOW);
});

for (const [name, offset] of [["-400 days", -400 * DAY], ["-5 s", -5 * SECOND]] as const) {
  Deno.test(`a sender whose clock is ${name} behind its key still sends, dated at its key`, async () => {
    const alice = await party("alice@example.org", new Date(NOW));
    const ct = await encryptAndSign({
      plaintext: text,
      recipients: [bob.pub],
      signingKey: alice.priv,
      now: NOW + offset,
    });
    const d = await decryptMessage(ct, bob.priv);
    assert.deepEqual(await d.verify([alice.pub]), { valid: true, signerFingerprint: alice.fpr });
    assert.equal(await signatureTime(ct, bob.priv), NOW, "no earlier than the key");
  });
}

for (const [name, offset] of [["+30 s", 30 * SECOND], ["+800 days", 800 * DAY]] as const) {
  Deno.test(`a sender whose clock is ${name} ahead sends; the receiver verifies`, async () => {
    const alice = await party("alice@example.org", new Date(NOW - DAY));
    const ct = await encryptAndSign({
      plaintext: text,
      recipients: [bob.pub],
      signingKey: alice.priv,
      now: NOW + offset,
    });
    assert.equal(await signatureTime(ct, bob.priv), NOW + offset);
    const d = await decryptMessage(ct, bob.priv);
    assert.deepEqual(await d.verify([alice.pub]), { valid: true, signerFingerprint: alice.fpr });
  });
}

Deno.test("a key made while the clock ran ahead sends and is a recipient once the clock is right", async () => {
  const ahead = await party("ahead@example.org", new Date(NOW + 10 * DAY));
  const toAhead = await encryptAndSign({
    plaintext: text,
    recipients: [ahead.pub],
    signingKey: bob.priv,
    now: NOW,
  });
  const d = await decryptMessage(toAhead, ahead.priv);
  assert.equal(await signatureTime(toAhead, ahead.priv), NOW, "our signature keeps our time");
  assert.equal((await d.verify([bob.pub])).valid, true);

  const fromAhead = await encryptAndSign({
    plaintext: text,
    recipients: [bob.pub],
    signingKey: ahead.priv,
    now: NOW,
  });
  const back = await decryptMessage(fromAhead, bob.priv);
  assert.equal((await back.verify([ahead.pub])).valid, true);
});

Deno.test("keyCreationTime() takes the earlier of our clock and the relay's, a day back, in seconds", () => {
  const t = (ms: number) => keyCreationTime(ms).getTime();
  assert.equal(KEY_BACKDATE_MS, DAY);
  assert.equal(t(NOW + 123), NOW - DAY, "whole seconds");
  assert.equal(keyCreationTime(NOW + 10 * DAY, NOW).getTime(), NOW - DAY, "our clock ahead");
  assert.equal(keyCreationTime(NOW, NOW + 10 * DAY).getTime(), NOW - DAY, "the relay ahead");
  assert.equal(keyCreationTime(NOW - 400 * DAY, NOW).getTime(), NOW - 401 * DAY, "ours behind");
});

Deno.test("generateAccountKey() dates every packet of the key at the time it is given", async () => {
  const at = new Date(NOW - 3 * DAY);
  const k = await party("dated@example.org", at);
  assert.equal(k.pub.getCreationTime().getTime(), at.getTime());
  assert.equal(newestKeyTime(k.pub).getTime(), at.getTime(), "self-signatures at the same time");
});
