/**
 * Tests of the `POST /rpc` fast path (`withFastPaths`, `createApp().serverFetch`): it answers
 * byte for byte as the Hono route does, in process and over a real `Deno.serve`, and leaves
 * every other request (other paths, other methods, `/rpc?…`, `/rpcx`) to the app. The
 * `GET /stream/<id>` fast path: tests/http/stream_fast_path_test.ts.
 */
import assert from "node:assert/strict";
import { exactStreamId, isExactRpcUrl, withFastPaths } from "../../src/http/fast_fetch.ts";
import { MAX_RPC_BODY_BYTES } from "../../src/http/rpc_route.ts";
import { setLogSink } from "../../src/log.ts";
import { snapshot, testApp } from "./_app.ts";

const JSON_TYPE = { "Content-Type": "application/json" };

/** One request, built afresh for every call (a body can be read once). */
interface Case {
  readonly name: string;
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Record<string, string>;
  readonly body?: () => BodyInit;
  readonly status: number;
}

const CASES: readonly Case[] = [
  {
    name: "valid call",
    headers: JSON_TYPE,
    body: () => '{"jsonrpc":"2.0","method":"get_config","params":[1,"displayname"],"id":1}',
    status: 200,
  },
  {
    name: "JSON-RPC error",
    headers: JSON_TYPE,
    body: () => '{"jsonrpc":"2.0","method":"get_config","params":[2,"addr"],"id":"x"}',
    status: 200,
  },
  { name: "parse error", headers: JSON_TYPE, body: () => "{oops", status: 200 },
  {
    name: "not UTF-8",
    headers: JSON_TYPE,
    body: () => new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    status: 200,
  },
  {
    name: "batch",
    headers: JSON_TYPE,
    body: () =>
      JSON.stringify([
        { jsonrpc: "2.0", method: "get_connectivity", params: [1], id: 1 },
        { jsonrpc: "2.0", method: "get_connectivity", params: [1] },
        { jsonrpc: "2.0", method: "nope", id: 2 },
        7,
      ]),
    status: 200,
  },
  {
    name: "notification",
    headers: JSON_TYPE,
    body: () => '{"jsonrpc":"2.0","method":"get_info","params":[1]}',
    status: 204,
  },
  {
    name: "wrong content type",
    headers: { "Content-Type": "text/plain" },
    body: () => '{"jsonrpc":"2.0","method":"get_connectivity","params":[1],"id":1}',
    status: 415,
  },
  {
    name: "no content type",
    body: () => new TextEncoder().encode('{"jsonrpc":"2.0","method":"x","id":1}'),
    status: 415,
  },
  {
    name: "oversized body",
    headers: JSON_TYPE,
    body: () => "[" + " ".repeat(MAX_RPC_BODY_BYTES) + "]",
    status: 413,
  },
  {
    name: "oversized streamed body",
    headers: JSON_TYPE,
    body: () => {
      const chunks = [new Uint8Array(700_000).fill(32), new Uint8Array(700_000).fill(32)];
      return new ReadableStream({
        pull(c) {
          const next = chunks.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      });
    },
    status: 413,
  },
];

function request(c: Case, path = c.path ?? "/rpc"): Request {
  const body = c.body?.();
  return new Request(`http://localhost${path}`, {
    method: c.method ?? "POST",
    ...(c.headers === undefined ? {} : { headers: c.headers }),
    ...(body === undefined ? {} : { body }),
  });
}

Deno.test("serverFetch answers POST /rpc byte for byte as the Hono route", async () => {
  const t = testApp({ license: "active" });
  try {
    assert.notEqual(t.app.serverFetch, t.app.fetch);
    for (const c of CASES) {
      const viaHono = await snapshot(await t.app.fetch(request(c)));
      const viaFast = await snapshot(await t.app.serverFetch(request(c)));
      assert.equal(viaHono.status, c.status, c.name);
      assert.deepEqual(viaFast, viaHono, c.name);
      assert.deepEqual(
        viaFast.headers.map(([name]) => name),
        c.status === 204 ? [] : ["content-type"],
        `${c.name}: Content-Type is the only header`,
      );
    }
  } finally {
    t.close();
  }
});

Deno.test("serverFetch leaves other paths, other methods and near-misses to the app", async () => {
  const t = testApp();
  const post = { headers: JSON_TYPE, body: () => '{"jsonrpc":"2.0","method":"x","id":1}' };
  const cases: Case[] = [
    { name: "GET /rpc", method: "GET", status: 405 },
    { name: "PUT /rpc", method: "PUT", ...post, status: 405 },
    { name: "GET /health", method: "GET", path: "/health", status: 200 },
    { name: "POST /rpc?x=1", path: "/rpc?x=1", ...post, status: 200 },
    { name: "POST /rpcx", path: "/rpcx", ...post, status: 404 },
    { name: "POST /rpc/", path: "/rpc/", ...post, status: 404 },
    { name: "POST /a/rpc", path: "/a/rpc", ...post, status: 404 },
    { name: "POST /nope", path: "/nope", ...post, status: 404 },
  ];
  try {
    for (const c of cases) {
      const viaHono = await snapshot(await t.app.fetch(request(c)));
      const viaFast = await snapshot(await t.app.serverFetch(request(c)));
      assert.equal(viaHono.status, c.status, c.name);
      if (c.path === "/health") {
        assert.equal(viaFast.status, 200); // uptime may tick between the two answers
      } else {
        assert.deepEqual(viaFast, viaHono, c.name);
      }
    }
  } finally {
    t.close();
  }
});

Deno.test("withFastPaths() routes exactly POST /rpc and GET /stream/<id>, the rest to the app", async () => {
  const seen: string[] = [];
  const handler = withFastPaths(
    (req) => (seen.push(`app ${req.method} ${req.url}`), new Response("app")),
    {
      rpc: (req) => (seen.push(`rpc ${req.method} ${req.url}`), Promise.resolve(new Response())),
      stream: (
        req,
        id,
      ) => (seen.push(`stream ${id} ${req.method}`), Promise.resolve(new Response())),
    },
  );
  const urls = [
    ["POST", "http://127.0.0.1:7397/rpc"],
    ["POST", "https://gw.example/rpc"],
    ["GET", "http://127.0.0.1:7397/rpc"],
    ["POST", "http://127.0.0.1:7397/rpc?x=1"],
    ["POST", "http://127.0.0.1:7397/rpcx"],
    ["POST", "http://127.0.0.1:7397/rpc/"],
    ["POST", "http://127.0.0.1:7397/x/rpc"],
    ["POST", "http://127.0.0.1:7397/"],
    ["GET", "http://127.0.0.1:7397/stream/12"],
    ["GET", "http://[::1]:7397/stream/4294967295"],
    ["HEAD", "http://127.0.0.1:7397/stream/12"],
    ["POST", "http://127.0.0.1:7397/stream/12"],
    ["GET", "http://127.0.0.1:7397/stream/12?x=1"],
    ["GET", "http://127.0.0.1:7397/stream/12/"],
    ["GET", "http://127.0.0.1:7397/stream/abc"],
    ["GET", "http://127.0.0.1:7397/stream/12345678901"],
  ];
  for (const [method, url] of urls) await (await handler(new Request(url, { method }))).text();
  assert.deepEqual(seen, [
    "rpc POST http://127.0.0.1:7397/rpc",
    "rpc POST https://gw.example/rpc",
    "app GET http://127.0.0.1:7397/rpc",
    "app POST http://127.0.0.1:7397/rpc?x=1",
    "app POST http://127.0.0.1:7397/rpcx",
    "app POST http://127.0.0.1:7397/rpc/",
    "app POST http://127.0.0.1:7397/x/rpc",
    "app POST http://127.0.0.1:7397/",
    "stream 12 GET",
    "stream 4294967295 GET",
    "app HEAD http://127.0.0.1:7397/stream/12",
    "app POST http://127.0.0.1:7397/stream/12",
    "app GET http://127.0.0.1:7397/stream/12?x=1",
    "app GET http://127.0.0.1:7397/stream/12/",
    "app GET http://127.0.0.1:7397/stream/abc",
    "app GET http://127.0.0.1:7397/stream/12345678901",
  ]);
});

Deno.test("exactStreamId() takes the digits of a /stream/<id> path only", () => {
  assert.equal(exactStreamId("http://127.0.0.1:7397/stream/7"), "7");
  assert.equal(exactStreamId("http://localhost/stream/0012"), "0012");
  for (
    const url of [
      "http://localhost/stream/",
      "http://localhost/stream/7?",
      "http://localhost/stream/7#x",
      "http://localhost/stream/%37",
      "http://localhost/x/stream/7",
      "http://localhost/stream/7/8",
      "http://localhost/streams/7",
      "localhost/stream/7",
    ]
  ) {
    assert.equal(exactStreamId(url), undefined, url);
  }
});

Deno.test("isExactRpcUrl() matches the path /rpc only", () => {
  assert.ok(isExactRpcUrl("http://127.0.0.1:7397/rpc"));
  assert.ok(isExactRpcUrl("http://[::1]:7397/rpc"));
  assert.ok(isExactRpcUrl("http://localhost/rpc"));
  for (
    const url of [
      "http://localhost/",
      "http://localhost/rpc?",
      "http://localhost/rpc#x",
      "http://localhost/rpc/",
      "http://localhost//rpc",
      "http://localhost/a/rpc",
      "http://rpc",
      "/rpc",
      "rpc",
    ]
  ) {
    assert.ok(!isExactRpcUrl(url), url);
  }
});

Deno.test("serverFetch answers a body that cannot be read with 400 -32700, logging no error", async () => {
  const lines: string[] = [];
  const prev = setLogSink((line) => lines.push(line));
  const t = testApp();
  const failing: Case = {
    name: "body read fails",
    headers: JSON_TYPE,
    body: () => new ReadableStream({ pull: (c) => c.error(new Error("client went away")) }),
    status: 400,
  };
  // Also with a declared length (the `Request.json()` path, not the streamed one).
  const declared: Case = { ...failing, headers: { ...JSON_TYPE, "Content-Length": "64" } };
  try {
    for (const c of [failing, declared]) {
      assert.equal(request(c).headers.get("content-length"), c === declared ? "64" : null);
      const viaHono = await snapshot(await t.app.fetch(request(c)));
      const viaFast = await snapshot(await t.app.serverFetch(request(c)));
      assert.equal(viaHono.status, 400);
      assert.deepEqual(viaFast, viaHono);
      const hex = viaFast.body.match(/../g) ?? [];
      const body = JSON.parse(String.fromCharCode(...hex.map((h) => parseInt(h, 16))));
      assert.equal(body.error.code, -32700);
      assert.match(body.error.message, /request body could not be read .*client went away/);
    }
    assert.deepEqual(lines.filter((l) => / (ERROR|WARN) /.test(l)), []);
  } finally {
    setLogSink(prev);
    t.close();
  }
});

Deno.test("serverFetch is app.fetch under --cors (CORS headers come from Hono)", async () => {
  const t = testApp({ cors: true });
  try {
    assert.equal(t.app.serverFetch, t.app.fetch);
    const res = await t.app.serverFetch(
      new Request("http://localhost/rpc", {
        method: "POST",
        headers: { ...JSON_TYPE, Origin: "https://ui.example" },
        body: '{"jsonrpc":"2.0","method":"get_connectivity","params":[1],"id":1}',
      }),
    );
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    assert.equal(await res.text(), '{"jsonrpc":"2.0","id":1,"result":4000}');
  } finally {
    t.close();
  }
});

/**
 * Sends raw HTTP/1.1 bytes and reads one whole answer (head, then `content-length` bytes), as
 * latin1 so every byte shows, without the Date header (the one line that may differ).
 */
async function exchange(
  port: number,
  head: string,
  body: Uint8Array,
  pieces = 1,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const writeAll = async (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  };
  try {
    await writeAll(new TextEncoder().encode(head));
    // In `pieces` parts with a pause between them, so the server sees a partly arrived body.
    const size = Math.ceil(body.length / pieces);
    for (let at = 0; at < body.length; at += size) {
      if (at > 0) await new Promise((r) => setTimeout(r, 20));
      await writeAll(body.subarray(at, at + size));
    }
    let answer = "";
    const buf = new Uint8Array(65_536);
    for (;;) {
      const end = answer.indexOf("\r\n\r\n");
      if (end >= 0) {
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(answer)?.[1] ?? 0);
        if (answer.length >= end + 4 + length) break;
      }
      const n = await conn.read(buf);
      if (n === null) break;
      for (const b of buf.subarray(0, n)) answer += String.fromCharCode(b);
    }
    return answer.replace(/\r\ndate: [^\r]*/i, "");
  } finally {
    conn.close();
  }
}

Deno.test("over Deno.serve, the fast path's wire bytes equal the Hono route's", async () => {
  const t = testApp({ license: "active" });
  const opts = { hostname: "127.0.0.1", port: 0, onListen: () => {} };
  const hono = Deno.serve(opts, t.app.fetch);
  const fast = Deno.serve(opts, t.app.serverFetch);
  const rpc = (type: string | null, body: Uint8Array, length = body.length) =>
    `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
    (type === null ? "" : `Content-Type: ${type}\r\n`) + `Content-Length: ${length}\r\n\r\n`;
  const text = (s: string) => new TextEncoder().encode(s);
  const cases: [string, string, Uint8Array][] = [
    ...CASES.filter((c) => typeof c.body?.() === "string" && c.status !== 413).map((c) =>
      [
        c.name,
        rpc(c.headers?.["Content-Type"] ?? null, text(c.body!() as string)),
        text(
          c.body!() as string,
        ),
      ] as [string, string, Uint8Array]
    ),
    ["not UTF-8", rpc("application/json", new Uint8Array(4)), new Uint8Array([123, 255, 254, 125])],
    // Declared over the limit: answered 413 before any of the body is sent.
    ["oversized", rpc("application/json", new Uint8Array(0), 2_000_000), new Uint8Array(0)],
    ["GET /rpc", "GET /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", text("")],
  ];
  try {
    for (const [name, head, body] of cases) {
      const viaHono = await exchange(hono.addr.port, head, body);
      const viaFast = await exchange(fast.addr.port, head, body);
      assert.match(viaHono, /^HTTP\/1\.1 [0-9]{3} /, name);
      assert.equal(viaFast, viaHono, name);
    }
  } finally {
    await hono.shutdown();
    await fast.shutdown();
    t.close();
  }
});

Deno.test("over Deno.serve, a near-limit body that arrives in pieces is answered in full", async () => {
  // Request.json() takes a body whole only once it has fully arrived; otherwise it reads the
  // stream. Both must give the same answer, the same as the Hono route's.
  const t = testApp();
  const opts = { hostname: "127.0.0.1", port: 0, onListen: () => {} };
  const hono = Deno.serve(opts, t.app.fetch);
  const fast = Deno.serve(opts, t.app.serverFetch);
  // Few members with long ids: a batch may hold at most 100 requests.
  const pad = "x".repeat(12_000);
  const one = (id: number) =>
    `{"jsonrpc":"2.0","method":"get_connectivity","params":[1],"id":"${pad}${id}"}`;
  const members: string[] = [];
  let size = 2;
  while (size + one(members.length).length + 1 < MAX_RPC_BODY_BYTES) {
    size += one(members.length).length + 1;
    members.push(one(members.length));
  }
  const body = new TextEncoder().encode(`[${members.join(",")}]`);
  assert.ok(body.length > MAX_RPC_BODY_BYTES - 13_000 && body.length <= MAX_RPC_BODY_BYTES);
  const head = `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  try {
    const viaFast = await exchange(fast.addr.port, head, body, 8);
    const viaHono = await exchange(hono.addr.port, head, body, 8);
    assert.equal(viaFast, viaHono);
    assert.match(viaFast, /^HTTP\/1\.1 200 /);
    const answers = JSON.parse(viaFast.slice(viaFast.indexOf("\r\n\r\n") + 4));
    assert.equal(answers.length, members.length);
    assert.deepEqual(answers.at(-1), {
      jsonrpc: "2.0",
      id: `${pad}${members.length - 1}`,
      result: 4000,
    });
  } finally {
    await hono.shutdown();
    await fast.shutdown();
    t.close();
  }
});
