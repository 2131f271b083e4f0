/**
 * Tests of readRpcBody(): a batch over the member limit is refused as it streams in and nothing of
 * it is kept, yet the body is read to its end; UTF-8 split across chunks decodes whichever way the
 * body arrives (a byte stream read into one buffer, as from the server, or a stream of chunks).
 */
import assert from "node:assert/strict";
import { readRpcBody } from "../../src/http/rpc_body.ts";

const encoder = new TextEncoder();
const LIMITS = { maxBytes: 1_048_576, maxMembers: 100 };

/** A POST whose body streams `parts`; `byteStream` as the HTTP server's bodies do. */
function streamed(parts: Uint8Array[], byteStream: boolean) {
  const queue = [...parts];
  let pulled = 0;
  let intoReadersBuffer = 0;
  const body = byteStream
    ? new ReadableStream({
      type: "bytes",
      pull(c) {
        const next = queue.shift();
        if (next === undefined) {
          c.close();
          return c.byobRequest?.respond(0); // a reader waiting with its buffer gets it back
        }
        pulled++;
        if (c.byobRequest !== null) intoReadersBuffer++; // the reader brought its own buffer
        c.enqueue(next.slice()); // the stream takes over the chunk's buffer
      },
    })
    : new ReadableStream<Uint8Array>({
      pull(c) {
        const next = queue.shift();
        if (next === undefined) return c.close();
        pulled++;
        c.enqueue(next);
      },
    });
  const req = new Request("http://x/rpc", { method: "POST", body });
  return {
    req,
    pulled: () => pulled,
    intoReadersBuffer: () => intoReadersBuffer,
    left: () => queue.length,
  };
}

Deno.test("readRpcBody() refuses a huge batch once counted, keeps none of it, reads it to its end", async () => {
  for (const byteStream of [true, false]) {
    const parts = [
      encoder.encode(`[${"{},".repeat(150)}`),
      ...Array.from({ length: 40 }, () => encoder.encode("{},".repeat(5_000))),
      encoder.encode("{}]"),
    ];
    const total = parts.reduce((n, p) => n + p.length, 0);
    const body = streamed(parts, byteStream);
    const got = await readRpcBody(body.req, LIMITS);
    assert.deepEqual(got, { kind: "batch-too-large", members: 101, received: total });
    assert.equal(body.left(), 0, "the rest of the body was read (and dropped)");
    assert.equal(body.pulled(), parts.length);
    // From a byte stream (as from the server) every chunk lands in the reader's one buffer.
    assert.equal(body.intoReadersBuffer(), byteStream ? parts.length : 0);
  }
});

Deno.test("readRpcBody() passes a batch within the limit whole, padding and all", async () => {
  const member = '{"jsonrpc":"2.0","method":"get_config","params":[1,"a"],"id":1}';
  const text = `[${Array(100).fill(member).join(",")}]${" ".repeat(100_000)}`;
  const bytes = encoder.encode(text);
  for (const byteStream of [true, false]) {
    const parts = [bytes.subarray(0, 5_000), bytes.subarray(5_000, 70_000), bytes.subarray(70_000)];
    const got = await readRpcBody(streamed(parts, byteStream).req, LIMITS);
    assert.deepEqual(got, { kind: "text", text, received: bytes.length });
  }
});

Deno.test("readRpcBody() decodes UTF-8 split anywhere across chunks, bad bytes as U+FFFD", async () => {
  const text = '{"jsonrpc":"2.0","method":"m","params":["é😀ü"],"id":1}';
  const good = encoder.encode(text);
  const bad = new Uint8Array([...encoder.encode('["'), 0xff, ...encoder.encode('"]')]);
  for (const byteStream of [true, false]) {
    for (let cut = 0; cut <= good.length; cut++) {
      const parts = [good.subarray(0, cut), good.subarray(cut)].filter((p) => p.length > 0);
      const got = await readRpcBody(streamed(parts, byteStream).req, LIMITS);
      assert.deepEqual(got, { kind: "text", text, received: good.length }, `cut at ${cut}`);
    }
    const got = await readRpcBody(
      streamed([bad.subarray(0, 3), bad.subarray(3)], byteStream).req,
      LIMITS,
    );
    assert.deepEqual(got, { kind: "text", text: '["\uFFFD"]', received: bad.length });
  }
});

Deno.test("readRpcBody() answers too-large past the byte limit, declared or streamed", async () => {
  const limits = { maxBytes: 1_000, maxMembers: 100 };
  const declared = new Request("http://x/rpc", {
    method: "POST",
    body: "x".repeat(2_000),
    headers: { "Content-Length": "2000" },
  });
  assert.deepEqual(await readRpcBody(declared, limits), {
    kind: "too-large",
    size: 2_000,
    atLeast: false,
    received: 0,
  });
  for (const byteStream of [true, false]) {
    const parts = [encoder.encode("[1,".padEnd(600, " ")), encoder.encode(" ".repeat(600))];
    const got = await readRpcBody(streamed(parts, byteStream).req, limits);
    assert.deepEqual(got, { kind: "too-large", size: 1_200, atLeast: true, received: 600 });
  }
});
