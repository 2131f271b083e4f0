/** Tests of encrypted_envelope.ts: the shape chatmail relays accept, checked by the relay's rules. */
import assert from "node:assert/strict";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { checkOutgoing } from "../../scripts/relay/filter_check.mjs";

const a = await generateAccountKey("alice@example.org");
const b = await generateAccountKey("bob@example.org");
const ciphertext = await encryptAndSign({
  plaintext: new TextEncoder().encode("Chat-Version: 1.0\r\n\r\nhi\r\n"),
  recipients: [await readPublicKey(b.publicKey)],
  signingKey: await readPrivateKey(a.privateKey),
});
const raw = new TextDecoder().decode(renderEncryptedEnvelope({
  from: "alice@example.org",
  messageId: "<3f9d2c1e-0000-4000-8000-000000000001@localhost>",
  date: new Date(Date.UTC(2026, 10, 20, 8, 0, 0)),
  ciphertext,
  boundary: "b0undary",
}));

Deno.test("renderEncryptedEnvelope() passes the chatmail acceptance rules", () => {
  assert.equal(checkOutgoing("alice@example.org", ["bob@example.org"], raw), null);
  assert.match(
    checkOutgoing("mallory@example.org", ["bob@example.org"], raw)!,
    /^500 Invalid FROM/,
  );
});

Deno.test("renderEncryptedEnvelope() writes Delta Chat's outer headers and only CRLF line ends", () => {
  assert.doesNotMatch(raw, /[^\r]\n/);
  for (
    const h of [
      "From: <alice@example.org>",
      'To: "hidden-recipients": ;',
      "Subject: [...]",
      "Chat-Version: 1.0",
      "MIME-Version: 1.0",
      "Date: Fri, 20 Nov 2026 08:00:00 +0000",
    ]
  ) {
    assert.ok(raw.includes(`\r\n${h}\r\n`) || raw.startsWith(`${h}\r\n`), h);
  }
  assert.doesNotMatch(raw, /Autocrypt/, "the key travels only inside the encrypted part");
  assert.ok(raw.endsWith("--b0undary--\r\n"));
});
