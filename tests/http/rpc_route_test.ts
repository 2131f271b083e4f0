/** Tests of POST /rpc over HTTP: status mapping, Content-Type, body limit, UTF-8, golden bodies. */
import assert from "node:assert/strict";
import { isJsonContentType, MAX_RPC_BODY_BYTES } from "../../src/http/rpc_route.ts";
import { postRpc, testApp } from "./_app.ts";

Deno.test("POST /rpc answers 200 with a JSON-RPC result", async () => {
  const t = testApp();
  try {
    const res = await postRpc(t.app, {
      jsonrpc: "2.0",
      method: "get_connectivity",
      params: [1],
      id: 1,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(await res.text(), '{"jsonrpc":"2.0","id":1,"result":4000}');
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc keeps HTTP 200 for JSON-RPC errors, including the license gate", async () => {
  const t = testApp();
  try {
    const res = await postRpc(t.app, {
      jsonrpc: "2.0",
      method: "secure_send_file",
      params: [1, 10, 11, "/files/x.pdf", true, true, 0],
      id: 5,
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      jsonrpc: "2.0",
      id: 5,
      error: {
        code: -32001,
        message: 'License required: "secure_send_file" needs an active license, but the license ' +
          "status is no_license. Activate one with: edge-gateway license activate <url>",
      },
    });
    const parse = await postRpc(t.app, "{oops");
    assert.equal(parse.status, 200);
    const body = await parse.json();
    assert.equal(body.error.code, -32700);
    assert.equal(body.id, null);
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc answers 204 for a void method and for notifications", async () => {
  const t = testApp({ license: "active" });
  try {
    const note = await postRpc(t.app, { jsonrpc: "2.0", method: "get_info", params: [1] });
    assert.equal(note.status, 204);
    assert.equal(await note.text(), "");
    const batch = await postRpc(t.app, [
      { jsonrpc: "2.0", method: "get_connectivity", params: [1] },
      { jsonrpc: "2.0", method: "nope" },
    ]);
    assert.equal(batch.status, 204);
    await batch.body?.cancel();
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc answers batches with arrays", async () => {
  const t = testApp();
  try {
    const res = await postRpc(t.app, [
      { jsonrpc: "2.0", method: "get_connectivity", params: [1], id: 1 },
      { jsonrpc: "2.0", method: "get_connectivity", params: [1] },
      { jsonrpc: "2.0", method: "get_config", params: [1, "displayname"], id: 2 },
    ]);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), [
      { jsonrpc: "2.0", id: 1, result: 4000 },
      { jsonrpc: "2.0", id: 2, result: "Test Gateway" },
    ]);
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc refuses curl -d's form type with 415 saying which header to add", async () => {
  const t = testApp();
  try {
    const res = await t.app.request("/rpc", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: '{"jsonrpc":"2.0","method":"get_connectivity","params":[1],"id":1}',
    });
    assert.equal(res.status, 415);
    assert.deepEqual((await res.json()).error, {
      code: -32600,
      message: "Content-Type must be application/json, got application/x-www-form-urlencoded " +
        "(what curl -d sends: add -H 'Content-Type: application/json')",
    });
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc accepts application/json with parameters, rejects others with 415", async () => {
  const t = testApp();
  const body = { jsonrpc: "2.0", method: "get_connectivity", params: [1], id: 1 };
  try {
    const ok = await postRpc(t.app, body, { "Content-Type": "Application/JSON; charset=utf-8" });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    for (const [type, shown] of [["text/plain", "text/plain"], [undefined, "none"]] as const) {
      // A Uint8Array body, so the Request does not add a text/plain Content-Type by itself.
      const headers: Record<string, string> = type === undefined ? {} : { "Content-Type": type };
      const res = await t.app.request("/rpc", { method: "POST", headers, body: bytes });
      assert.equal(res.status, 415, shown);
      assert.deepEqual(await res.json(), {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: `Content-Type must be application/json, got ${shown}` },
      });
    }
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc answers 413 with -32600 for a body over 1 MiB", async () => {
  const t = testApp();
  try {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      method: "x",
      params: ["a".repeat(MAX_RPC_BODY_BYTES)],
      id: 1,
    });
    const res = await postRpc(t.app, big, {
      "Content-Type": "application/json",
      "Content-Length": String(big.length),
    });
    assert.equal(res.status, 413);
    assert.deepEqual(await res.json(), {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: `request body too large (${big.length} bytes, limit 1048576)`,
      },
    });
    const chunks = [
      new TextEncoder().encode(big.slice(0, 700_000)),
      new TextEncoder().encode(big.slice(700_000)),
    ];
    const streamed = await t.app.request("/rpc", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new ReadableStream({
        pull(c) {
          const next = chunks.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      }),
    });
    assert.equal(streamed.status, 413);
    assert.match(
      (await streamed.json()).error.message,
      /^request body too large \(at least \d+ bytes/,
    );
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc answers -32700 when bytes that are not UTF-8 break the JSON", async () => {
  const t = testApp();
  try {
    const res = await t.app.request("/rpc", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32700);
    assert.match(body.error.message, /^parse error: body is not JSON \(.+\)$/);
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc decodes bytes that are not UTF-8 inside a string as U+FFFD, however the body arrives", async () => {
  const t = testApp();
  const enc = new TextEncoder();
  const [head, tail] = ['{"jsonrpc":"2.0","method":"get_config","params":[1,"', '"],"id":7}'];
  const bytes = new Uint8Array([...enc.encode(head), 0xff, ...enc.encode(tail)]);
  const chunked = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 10));
        c.enqueue(bytes.subarray(10));
        c.close();
      },
    });
  try {
    for (const body of [bytes, chunked()]) {
      const res = await t.app.request("/rpc", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      assert.equal(res.status, 200);
      const answer = await res.json();
      assert.equal(answer.id, 7);
      assert.match(answer.error.message, /^unknown config key "\uFFFD"/);
    }
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc reports the garbage of each streamed body, read or lost, and of no other", async () => {
  const noted: number[] = [];
  const t = testApp({ noteGarbage: (bytes) => noted.push(bytes) });
  const member = '{"jsonrpc":"2.0","method":"get_config","params":[1,"displayname"],"id":1}';
  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await postRpc(t.app, body, { "Content-Type": "application/json", ...headers });
    await res.body?.cancel();
    return res.status;
  };
  try {
    const small = `[${member}]`;
    assert.equal(await post(small, { "Content-Length": String(small.length) }), 200);
    assert.deepEqual(noted, [], "a small declared body is read in one call");
    assert.equal(await post(small), 200);
    assert.deepEqual(noted, [small.length], "a body of undeclared length is streamed");
    const padded = `[${member}]${" ".repeat(70_000)}`;
    assert.equal(await post(padded), 200);
    const batch = `[${"{},".repeat(300_000)}{}]`;
    assert.equal(await post(batch), 200);
    assert.deepEqual(noted.slice(1), [padded.length, batch.length], "read, or read and dropped");
    const declaredTooLarge = "x".repeat(MAX_RPC_BODY_BYTES + 1);
    assert.equal(await post(declaredTooLarge, { "Content-Length": "1048577" }), 413);
    assert.equal(noted.length, 3, "a body refused by its declared length is never read");
    const cut = await t.app.request("/rpc", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new ReadableStream({ pull: (c) => c.error(new Error("connection reset")) }),
    });
    assert.equal(cut.status, 400);
    await cut.body?.cancel();
    assert.deepEqual(noted.slice(3), [65_536], "a failed read leaves its buffers behind");
  } finally {
    t.close();
  }
});

Deno.test("POST /rpc serves rpc.discover", async () => {
  const t = testApp();
  try {
    const res = await postRpc(t.app, { jsonrpc: "2.0", method: "rpc.discover", id: 1 });
    const body = await res.json();
    assert.equal(body.result.openrpc, "1.2.6");
    assert.ok(body.result.methods.some((m: { name: string }) => m.name === "get_info"));
  } finally {
    t.close();
  }
});

Deno.test("isJsonContentType() matches the media type only", () => {
  assert.ok(isJsonContentType("application/json"));
  assert.ok(isJsonContentType(" application/json ; charset=UTF-8"));
  assert.ok(!isJsonContentType("application/jsonp"));
  assert.ok(!isJsonContentType("text/json"));
  assert.ok(!isJsonContentType(null));
});
