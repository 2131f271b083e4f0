/** Tests of `get_chat_securejoin_qr_code` and `secure_join` through dispatch. */
import assert from "node:assert/strict";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { createMethodTable } from "../../../src/rpc/method.ts";
import { SECUREJOIN_METHODS } from "../../../src/rpc/methods/securejoin.ts";
import type { Services } from "../../../src/services.ts";
import { fakeServices } from "../_fake_services.ts";

const TABLE = createMethodTable(SECUREJOIN_METHODS);

async function call(s: Services, method: string, params: unknown[]) {
  const reply = await dispatch(JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }), s, TABLE);
  assert.equal(reply.status, 200);
  return (reply as { body: unknown }).body as {
    result?: unknown;
    error?: { code: number; message: string };
  };
}

Deno.test("get_chat_securejoin_qr_code makes a legacy OPENPGP4FPR link with a new auth each call", async () => {
  const s = fakeServices({ profile: "My Gateway" });
  const one = (await call(s, "get_chat_securejoin_qr_code", [1, null])).result as string;
  const two = (await call(s, "get_chat_securejoin_qr_code", [1, null])).result as string;
  const shape =
    /^OPENPGP4FPR:([0-9A-F]{40})#a=me%40relay\.test&n=My\+Gateway&i=([\w-]{24})&s=([\w-]{24})$/;
  const [m1, m2] = [shape.exec(one), shape.exec(two)];
  assert.ok(m1 && m2, one);
  assert.equal(m1[1], s.core.self.fingerprint);
  assert.equal(m1[2], m2[2], "the invite number is kept");
  assert.notEqual(m1[3], m2[3], "a new auth token per invite");
  const group = await call(s, "get_chat_securejoin_qr_code", [1, 12]);
  assert.equal(group.error?.code, -1);
});

Deno.test("secure_join answers -32602 for malformed links and -1 for its own link", async () => {
  const s = fakeServices({ profile: "Me" });
  const bad = await call(s, "secure_join", [1, "https://example.com/x"]);
  assert.equal(bad.error?.code, -32602);
  assert.match(bad.error!.message, /not an invite link/);
  const fpr = await call(s, "secure_join", [
    1,
    "OPENPGP4FPR:XYZ#a=a%40b.c&i=AAAAAAAAAAAA&s=AAAAAAAAAAAA",
  ]);
  assert.equal(fpr.error?.code, -32602);
  assert.match(fpr.error!.message, /fingerprint/);
  const own = await call(s, "secure_join", [1, s.core.secureJoin.createInvite()]);
  assert.equal(own.error?.code, -1);
  assert.match(own.error!.message, /your own invite link/);
});
