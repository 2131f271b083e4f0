/** Tests of random.ts: tokens and ids as Delta Chat makes them. */
import assert from "node:assert/strict";
import { newToken, randomBase64Url } from "../../src/crypto/random.ts";

Deno.test("newToken() makes 24 base64url characters from 18 random bytes", () => {
  const t = newToken(() => new Uint8Array(18).fill(0xfb));
  assert.equal(t, "-_v7-_v7-_v7-_v7-_v7-_v7");
  assert.match(newToken(), /^[A-Za-z0-9_-]{24}$/);
});

Deno.test("randomBase64Url() drops the padding of lengths not divisible by 3", () => {
  assert.equal(randomBase64Url(2, () => new Uint8Array([0xff, 0xff])), "__8");
  assert.equal(randomBase64Url(33).length, 44);
});
