/** Tests of bearer.ts: the Bearer scheme of the Authorization header. */
import assert from "node:assert/strict";
import { bearerToken } from "../../src/http/bearer.ts";

Deno.test("bearerToken() reads the Bearer scheme only", () => {
  assert.equal(bearerToken("Bearer abc"), "abc");
  assert.equal(bearerToken("bearer  abc "), "abc");
  assert.equal(bearerToken("Basic abc"), undefined);
  assert.equal(bearerToken("Bearer a b"), undefined);
  assert.equal(bearerToken(undefined), undefined);
  assert.equal(bearerToken(null), undefined);
});
