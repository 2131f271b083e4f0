/** Tests of readLimitedBody(): declared and undeclared sizes, exact limit, empty bodies. */
import assert from "node:assert/strict";
import { describeSize, readLimitedBody } from "../../src/http/body.ts";

function streamed(parts: number[]): Request {
  const chunks = parts.map((n) => new Uint8Array(n).fill(65));
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      const next = chunks.shift();
      if (next) c.enqueue(next);
      else c.close();
    },
  });
  return new Request("http://x/", { method: "POST", body });
}

Deno.test("readLimitedBody() reads a body up to and including the limit", async () => {
  const exact = await readLimitedBody(streamed([6, 4]), 10);
  assert.ok(exact.ok);
  assert.equal(new TextDecoder().decode(exact.bytes), "AAAAAAAAAA");
  const empty = await readLimitedBody(new Request("http://x/", { method: "POST" }), 10);
  assert.ok(empty.ok && empty.bytes.length === 0);
});

Deno.test("readLimitedBody() refuses a declared or streamed size over the limit", async () => {
  const declared = await readLimitedBody(
    new Request("http://x/", {
      method: "POST",
      body: "x".repeat(20),
      headers: { "Content-Length": "20" },
    }),
    10,
  );
  assert.deepEqual(declared, { ok: false, size: 20, atLeast: false });
  assert.equal(describeSize({ size: 20, atLeast: false }), "20 bytes");
  const undeclared = await readLimitedBody(streamed([6, 6, 6]), 10);
  assert.deepEqual(undeclared, { ok: false, size: 12, atLeast: true });
  assert.equal(describeSize({ size: 12, atLeast: true }), "at least 12 bytes");
});
