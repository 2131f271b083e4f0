/**
 * Tests of signature_check.ts: a valid signature by the right key verifies whatever its creation
 * time or the key's says (seconds, days and years before and after "now", a key from the future,
 * a signature older than its key); unsigned data, another signer, altered data and a revoked key
 * are still refused.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { checkSignatures, SignatureFailure } from "../../src/crypto/signature_check.ts";

const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;
const NOW = Date.now();

/** Clock offsets of a sender against the receiver, as the field has them. */
const OFFSETS: readonly [string, number][] = [
  ["-800 days", -800 * DAY],
  ["-400 days", -400 * DAY],
  ["-2 days", -2 * DAY],
  ["-30 s", -30 * SECOND],
  ["-5 s", -5 * SECOND],
  ["+5 s", 5 * SECOND],
  ["+30 s", 30 * SECOND],
  ["+2 days", 2 * DAY],
  ["+800 days", 800 * DAY],
];

async function party(addr: string, createdAt?: Date) {
  const k = await generateAccountKey(addr, createdAt);
  return { priv: await readPrivateKey(k.privateKey), pub: await readPublicKey(k.publicKey) };
}

/** SignaturePacket.sign as OpenPGP.js 6 has it (its declarations omit the arguments). */
type SignPacket = (
  key: openpgp.AnyKeyPacket,
  data: openpgp.LiteralDataPacket,
  date: Date,
  detached: boolean,
  config: openpgp.Config,
) => Promise<void>;

/**
 * A data signature made at `created` as any OpenPGP implementation that does not check its own
 * clock makes it (rPGP, Delta Chat's, signs with "now" whatever the key's time), and the literal
 * data it signs.
 */
async function signAt(key: openpgp.PrivateKey, data: Uint8Array, created: Date) {
  const msg = await openpgp.createMessage({ binary: data });
  const literal = msg.packets.findPacket(
    openpgp.enums.packet.literalData,
  ) as openpgp.LiteralDataPacket;
  const signing = await key.getSigningKey(undefined, null);
  const sig = new openpgp.SignaturePacket();
  sig.signatureType = openpgp.enums.signature.binary;
  sig.publicKeyAlgorithm = signing.keyPacket.algorithm;
  sig.hashAlgorithm = openpgp.enums.hash.sha256;
  await (sig.sign as unknown as SignPacket).call(sig, signing.keyPacket, literal, created, false, {
    ...openpgp.config,
  });
  return { sig, literal };
}

const data = new TextEncoder().encode("Chat-Version: 1.0\r\n\r\nhello\r\n");
const alice = await party("alice@example.org", new Date(NOW - DAY));
const eve = await party("eve@example.org");

for (const [name, offset] of OFFSETS) {
  Deno.test(`a signature made by a clock ${name} off verifies`, async () => {
    const { sig, literal } = await signAt(alice.priv, data, new Date(NOW + offset));
    const check = await checkSignatures([sig], literal, [alice.pub]);
    assert.deepEqual(check, {
      valid: true,
      signerFingerprint: alice.pub.getFingerprint().toUpperCase(),
    });
  });
}

Deno.test("a key made in the future verifies, also a signature older than the key itself", async () => {
  const ahead = await party("ahead@example.org", new Date(NOW + 10 * DAY));
  for (const at of [NOW + 11 * DAY, NOW, NOW - 3 * DAY]) {
    const { sig, literal } = await signAt(ahead.priv, data, new Date(at));
    const check = await checkSignatures([sig], literal, [ahead.pub]);
    assert.equal(check.valid, true, new Date(at).toISOString());
  }
  // OpenPGP.js's own check refuses the same signature ("Key is newer than the signature").
  const { sig } = await signAt(ahead.priv, data, new Date(NOW));
  const message = await openpgp.createMessage({ binary: data });
  const signature = new openpgp.Signature(new openpgp.PacketList());
  signature.packets.push(sig);
  const [own] = (await openpgp.verify({
    message,
    signature,
    verificationKeys: ahead.pub,
    date: null as unknown as Date,
  })).signatures;
  await assert.rejects(own.verified);
});

Deno.test("unsigned data, another signer, altered data and a revoked key are still refused", async () => {
  const { sig, literal } = await signAt(alice.priv, data, new Date(NOW));
  const none = await checkSignatures([], literal, [alice.pub]);
  assert.equal(!none.valid && none.failure, SignatureFailure.UNSIGNED);

  const other = await checkSignatures([sig], literal, [eve.pub]);
  assert.equal(!other.valid && other.failure, SignatureFailure.UNKNOWN_SIGNER);
  assert.match(!other.valid ? other.detail : "", /not among the keys offered/);

  const altered = await signAt(alice.priv, data, new Date(NOW));
  const changed = (await openpgp.createMessage({ binary: new TextEncoder().encode("other") }))
    .packets.findPacket(openpgp.enums.packet.literalData) as openpgp.LiteralDataPacket;
  const bad = await checkSignatures([altered.sig], changed, [alice.pub]);
  assert.equal(!bad.valid && bad.failure, SignatureFailure.INVALID);

  const revoked = (await alice.priv.revoke({}, new Date(NOW))).toPublic();
  const gone = await checkSignatures([sig], literal, [revoked]);
  assert.equal(!gone.valid && gone.failure, SignatureFailure.INVALID);
  assert.match(!gone.valid ? gone.detail : "", /revoked/i);
});
