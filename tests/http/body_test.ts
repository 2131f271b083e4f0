/** Tests of readLimitedBody() and streamLimitedBody(): sizes, limits, empty bodies, buffers. */
import assert from "node:assert/strict";
import { describeSize, readLimitedBody, streamLimitedBody } from "../../src/http/body.ts";

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

Deno.test("streamLimitedBody() waits on a trickling body with a small buffer, a flowing one with a large one", async () => {
  const sizes = [900, 4_096, 65_536, 65_536, 65_536, 100];
  const offered: number[] = [];
  let sent = 0;
  const body = new ReadableStream({
    type: "bytes",
    pull(c) {
      const request = c.byobRequest!; // the reader brought its own buffer
      offered.push(request.view!.byteLength);
      const size = sizes.shift();
      if (size === undefined) {
        c.close();
        return request.respond(0);
      }
      const n = Math.min(size, request.view!.byteLength);
      new Uint8Array(request.view!.buffer, request.view!.byteOffset, n).fill(65);
      sent += n;
      request.respond(n);
    },
  });
  let received = 0;
  const got = await streamLimitedBody(
    new Request("http://x/", { method: "POST", body }),
    1_048_576,
    (chunk) => received += chunk.byteLength,
  );
  assert.deepEqual(got, { ok: true, size: sent });
  assert.equal(received, sent);
  // 900 bytes: still trickling; 4 KiB filled the small buffer: flowing until the 100-byte read.
  assert.deepEqual(offered, [4_096, 4_096, 65_536, 65_536, 65_536, 65_536, 4_096]);
});
