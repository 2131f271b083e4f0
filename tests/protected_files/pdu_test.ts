/** Tests of the PDU encoding: versioned JSON, detached signatures, refusal of anything altered. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { readPrivateKey } from "../../src/crypto/pgp.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { toBase64 } from "../../src/crypto/armor.ts";
import {
  decodePdu,
  foldPdu,
  type GrantPdu,
  pduB64,
  PduError,
  PduType,
  shareB64,
  signPdu,
  verifyPdu,
} from "../../src/protected_files/pdu.ts";

const alice = await generateAccountKey("alice@relay.test");
const mallory = await generateAccountKey("mallory@relay.test");
const aliceKey = await readPrivateKey(alice.privateKey);
const malloryKey = await readPrivateKey(mallory.privateKey);

const GRANT: GrantPdu = {
  v: 1,
  type: PduType.GRANT,
  file_uid: "0123456789abcdef0123456789abcdef",
  issued_at: 1_767_000_000,
  recipient: "B".repeat(40),
  s2: shareB64(new Uint8Array(32).fill(7)),
  not_after: 0,
  request_id: "",
};

Deno.test("signPdu() and verifyPdu() round-trip under the signer's key", async () => {
  const signed = await signPdu(GRANT, aliceKey);
  assert.match(signed.encoded, /^[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
  assert.deepEqual(await verifyPdu(signed.encoded, alice.publicKey), GRANT);
  assert.deepEqual(await verifyPdu(foldPdu(signed.encoded), alice.publicKey), GRANT, "folded");
});

Deno.test("verifyPdu() accepts a PDU signed by a clock days ahead or behind of ours", async () => {
  const json = new TextEncoder().encode(JSON.stringify(GRANT));
  for (const days of [2, 800, -400]) {
    const sig = await openpgp.sign({
      message: await openpgp.createMessage({ binary: json }),
      signingKeys: aliceKey,
      // The signer's own clock; before its key's birth OpenPGP.js would refuse to sign at all.
      date: new Date(
        Math.max(Date.now() + days * 86_400_000, aliceKey.getCreationTime().getTime()),
      ),
      detached: true,
      format: "binary",
    }) as Uint8Array;
    const encoded = `${toBase64(json)}.${toBase64(sig)}`;
    assert.deepEqual(await verifyPdu(encoded, alice.publicKey), GRANT, `${days} days`);
  }
});

Deno.test("verifyPdu() refuses another signer, altered JSON and a swapped signature", async () => {
  const signed = await signPdu(GRANT, aliceKey);
  await assert.rejects(() => verifyPdu(signed.encoded, mallory.publicKey), PduError);
  const [, sig] = signed.encoded.split(".");
  const altered = toBase64(new TextEncoder().encode(JSON.stringify({ ...GRANT, not_after: 1 })));
  await assert.rejects(() => verifyPdu(`${altered}.${sig}`, alice.publicKey), /does not verify/);
  const forged = await signPdu({ ...GRANT, not_after: 1 }, malloryKey);
  const [json] = forged.encoded.split(".");
  await assert.rejects(() => verifyPdu(`${json}.${sig}`, alice.publicKey), PduError);
});

Deno.test("pduB64() is one base64 string of the whole PDU, read as the header form is", async () => {
  const signed = await signPdu(GRANT, aliceKey);
  const one = pduB64(signed.encoded);
  assert.match(one, /^[A-Za-z0-9+/]+={0,2}$/, "one base64 string, no separator");
  assert.equal(
    new TextDecoder().decode(Uint8Array.from(atob(one), (c) => c.charCodeAt(0))),
    signed.encoded,
  );
  assert.deepEqual(await verifyPdu(one, alice.publicKey), GRANT, "the one-string form");
  assert.deepEqual(await verifyPdu(signed.encoded, alice.publicKey), GRANT, "the old form");
  assert.deepEqual(decodePdu(one).json, decodePdu(signed.encoded).json);
  await assert.rejects(() => verifyPdu(one, mallory.publicKey), PduError, "still verified");
  assert.throws(() => decodePdu(pduB64("no-dot-inside")), PduError);
  assert.throws(() => decodePdu(toBase64(new Uint8Array([0xff, 0xfe, 0x2e]))), PduError);
});

Deno.test("decodePdu() rejects other versions, unknown types and malformed input", () => {
  const enc = (v: unknown) => `${toBase64(new TextEncoder().encode(JSON.stringify(v)))}.AAAA`;
  assert.throws(() => decodePdu(enc({ ...GRANT, v: 2 })), /unsupported PDU version 2/);
  assert.throws(() => decodePdu(enc({ ...GRANT, type: "steal" })), /unknown PDU type/);
  assert.throws(() => decodePdu(enc({ ...GRANT, file_uid: "x" })), /file_uid/);
  assert.throws(() => decodePdu("no-dot"), PduError);
  assert.throws(() => decodePdu("a.b.c"), PduError);
  assert.throws(() => decodePdu("x".repeat(70_000) + ".AAAA"), /too large/);
});
