/** The `Edge-Transfer-Direct` header and its JSON body, read strictly. */
import assert from "node:assert/strict";
import {
  formatDirect,
  MAX_DIRECT_BODY_BYTES,
  parseDirect,
  parseDirectBody,
} from "../../../src/core/transfer/direct_mail.ts";

const ID = "0123456789abcdef0123456789abcdef";

Deno.test("offer, answer and decline headers read back what was written", () => {
  for (
    const h of [
      { id: ID, action: "offer", until: 1_700_000_000_000 },
      { id: ID, action: "answer" },
      { id: ID, action: "decline", reason: "off" },
    ] as const
  ) {
    assert.deepEqual(parseDirect(formatDirect(h)), h);
  }
});

Deno.test("headers that do not parse are refused", () => {
  for (
    const v of [
      undefined,
      "",
      `id=${ID}`,
      `id=${ID.toUpperCase()}; action=answer`,
      `id=${ID}; action=offer`,
      `id=${ID}; action=offer; until=-1`,
      `id=${ID}; action=decline; reason=Not Allowed`,
      `id=${ID}; action=accept`,
      `id=${ID}; action`,
    ]
  ) {
    assert.equal(parseDirect(v), undefined, String(v));
  }
});

Deno.test("a body is one JSON object within the bound", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.deepEqual(parseDirectBody(enc('{"v":1}')), { v: 1 });
  assert.equal(parseDirectBody(enc("[1]")), undefined);
  assert.equal(parseDirectBody(enc("null")), undefined);
  assert.equal(parseDirectBody(enc("{")), undefined);
  assert.equal(parseDirectBody(new Uint8Array([0xff, 0xfe])), undefined);
  const big = enc(`{"x":"${"a".repeat(MAX_DIRECT_BODY_BYTES)}"}`);
  assert.equal(parseDirectBody(big), undefined);
});
