/** concatBytes: the parts in order in one new buffer. */
import assert from "node:assert/strict";
import { concatBytes, toHex } from "../src/bytes.ts";

Deno.test("concatBytes joins the parts in order, empty parts included", () => {
  const out = concatBytes([Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)]);
  assert.deepEqual(out, Uint8Array.of(1, 2, 3));
});

Deno.test("concatBytes of no parts is empty, of one part a copy", () => {
  assert.equal(concatBytes([]).byteLength, 0);
  const one = Uint8Array.of(7, 8);
  const out = concatBytes([one]);
  assert.deepEqual(out, one);
  assert.notEqual(out.buffer, one.buffer);
});

Deno.test("toHex() gives two lower-case digits per byte", () => {
  assert.equal(toHex(new Uint8Array([0, 1, 0xab, 0xff])), "0001abff");
  assert.equal(toHex(new Uint8Array()), "");
});
