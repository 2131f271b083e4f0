/** Tests of license token verification: trusted signatures pass; everything else says why not. */
import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { importTrustedKey, spkiKeyId, verifyLicenseToken } from "../../src/license/verify.ts";
import { claims, sign, testKey } from "./_tokens.ts";

Deno.test("verifyLicenseToken() accepts a token signed by a trusted key", async () => {
  const key = await testKey();
  const other = await testKey("other");
  const token = await sign(key, claims());
  const v = await verifyLicenseToken(token, [other.trusted, key.trusted]);
  assert.ok(v.ok);
  assert.deepEqual(v.claims, claims());
  assert.equal(v.signer, key.trusted);
  const noKid = await sign(key, claims(), { kid: undefined });
  assert.ok((await verifyLicenseToken(noKid, [other.trusted, key.trusted])).ok, "tries each key");
});

Deno.test("verifyLicenseToken() refuses tampered, foreign-signed and malformed tokens", async () => {
  const key = await testKey();
  const other = await testKey("other");
  const token = await sign(key, claims());
  const [h, p, s] = token.split(".");
  const payload = JSON.parse(atob(p.replace(/-/g, "+").replace(/_/g, "/")));
  payload.max_devices = 999;
  const forged = btoa(JSON.stringify(payload)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
  const tampered = await verifyLicenseToken(`${h}.${forged}.${s}`, [key.trusted]);
  assert.ok(!tampered.ok);
  assert.match(tampered.reason, /^the license signature does not verify/);

  const foreign = await verifyLicenseToken(await sign(other, claims()), [key.trusted]);
  assert.ok(!foreign.ok);
  assert.match(foreign.reason, /signed by an untrusted key \(kid [0-9a-f]{16}\)/);
  const foreignNoKid = await verifyLicenseToken(
    await sign(other, claims(), { kid: undefined }),
    [key.trusted],
  );
  assert.ok(!foreignNoKid.ok);
  assert.match(foreignNoKid.reason, /does not verify/);

  for (const junk of ["", "not a token", "a.b", "{}"]) {
    const v = await verifyLicenseToken(junk, [key.trusted]);
    assert.ok(!v.ok);
    assert.equal(v.reason, "the license is not a signed token (compact JWS)");
  }
  const none = await verifyLicenseToken(token, []);
  assert.ok(!none.ok);
  assert.equal(none.reason, "this build trusts no license signing key");
  const missing = await verifyLicenseToken(await sign(key, { jti: "x" }), [key.trusted]);
  assert.ok(!missing.ok);
  assert.match(missing.reason, /lacks a valid claim/);
});

Deno.test("verifyLicenseToken() refuses an HMAC token keyed with the public key", async () => {
  const key = await testKey();
  const secret = new TextEncoder().encode(key.pem);
  const hs = await new SignJWT({}).setProtectedHeader({ alg: "HS256", kid: key.trusted.keyId })
    .sign(secret);
  const v = await verifyLicenseToken(hs, [key.trusted]);
  assert.ok(!v.ok);
  assert.match(v.reason, /does not verify/);
});

Deno.test("importTrustedKey() names a file that holds no Ed25519 public key", async () => {
  await assert.rejects(
    importTrustedKey("/keys/x.pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"),
    /\/keys\/x\.pem is not an Ed25519 public key in SPKI PEM form/,
  );
  await assert.rejects(spkiKeyId("hello"), /not a PEM public key/);
  const key = await testKey();
  assert.match(key.trusted.keyId, /^[0-9a-f]{16}$/);
  assert.equal(await spkiKeyId(key.pem), key.trusted.keyId);
});
