/** Tests of the license claims: round trip through a JWT payload, and why a payload is refused. */
import assert from "node:assert/strict";
import { claimsToPayload, parseClaims } from "../../src/license/claims.ts";
import { claims } from "./_tokens.ts";

Deno.test("parseClaims() reads back what claimsToPayload() wrote", () => {
  assert.deepEqual(parseClaims(claimsToPayload(claims())), claims());
  const revoked = claims({ revoked: true });
  assert.equal(claimsToPayload(revoked).revoked, true);
  assert.deepEqual(parseClaims(claimsToPayload(revoked)), revoked);
  assert.equal("revoked" in claimsToPayload(claims()), false, "absent unless revoked");
});

Deno.test("parseClaims() names the first missing or mistyped claim", () => {
  const good = claimsToPayload(claims());
  const without = (k: string) => Object.fromEntries(Object.entries(good).filter(([n]) => n !== k));
  assert.equal(parseClaims([]), "the license payload is not a JSON object");
  assert.match(String(parseClaims(without("jti"))), /lacks a valid claim "jti"/);
  assert.match(String(parseClaims(without("device"))), /"device" \(the device id/);
  assert.match(String(parseClaims({ ...good, exp: "soon" })), /"exp" \(Unix seconds\)/);
  assert.match(String(parseClaims({ ...good, max_devices: 0 })), /"max_devices"/);
  assert.match(String(parseClaims({ ...good, grace_days: 1.5 })), /"grace_days"/);
  assert.match(String(parseClaims({ ...good, revoked: "yes" })), /"revoked" is not a boolean/);
});
