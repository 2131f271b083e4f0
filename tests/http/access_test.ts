/**
 * Who may call the API (docs/access.md; issue 18 §2): the Host matrix against DNS rebinding on
 * every route, over a real `Deno.serve` and on both paths (the fast paths without `--cors`, Hono's
 * routes with it); the Origin check; API tokens and scopes; the CORS answers.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ApiTokens, hostAllowed, hostName, loadApiTokens } from "../../src/http/access.ts";
import { RpcCode } from "../../src/constants.ts";
import { ConfigError } from "../../src/errors.ts";
import { TEST_FINGERPRINT, testApp, type TestAppOptions, viewerToken } from "./_app.ts";

const hex = (token: string) => createHash("sha256").update(token).digest("hex");

/** Serves a test app on a free loopback port; `close()` stops both. */
function served(options: TestAppOptions = {}) {
  const t = testApp(options);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    t.app.serverFetch,
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  return {
    ...t,
    base,
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      t.close();
    },
  };
}

const RPC_BODY = '{"jsonrpc":"2.0","method":"get_connectivity","params":[1],"id":1}';

/**
 * One raw HTTP/1.1 request (fetch sets its own Host header): answers the status and, unless it is
 * an event stream (which never ends), the body.
 */
async function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; text: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const all = { Host: `127.0.0.1:${port}`, Connection: "close", ...headers };
    const head = `${method} ${path} HTTP/1.1\r\n` +
      Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("") +
      (body === "" ? "" : `Content-Length: ${new TextEncoder().encode(body).length}\r\n`) +
      "\r\n" + body;
    await conn.write(new TextEncoder().encode(head));
    let text = "";
    const buf = new Uint8Array(16_384);
    const decoder = new TextDecoder();
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += decoder.decode(buf.subarray(0, n), { stream: true });
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0 && /content-type: text\/event-stream/i.test(text.slice(0, end))) break;
    }
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? NaN);
    return { status, text: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    conn.close();
  }
}

/** One request per route, as raw HTTP with these extra headers (`Host` replaces the default). */
function routeRequests(port: number, extra: Record<string, string>) {
  const json = { "Content-Type": "application/json", ...extra };
  return {
    "POST /rpc": () => raw(port, "POST", "/rpc", json, RPC_BODY),
    "GET /events": () => raw(port, "GET", "/events", extra),
    "POST /auth": () =>
      raw(port, "POST", "/auth", json, JSON.stringify({ device_fingerprint: TEST_FINGERPRINT })),
    "GET /stream/1": () => raw(port, "GET", "/stream/1", extra),
    "GET /health": () => raw(port, "GET", "/health", extra),
  };
}

Deno.test("hostName() takes the name from a Host value; hostAllowed() the matrix", () => {
  assert.equal(hostName("Example.ORG:7200"), "example.org");
  assert.equal(hostName("[::1]:7200"), "[::1]");
  assert.equal(hostName("gw.example.org."), "gw.example.org");
  assert.equal(hostName(""), undefined);
  assert.equal(hostName("[::1"), undefined);
  assert.equal(hostName("a:b:c"), undefined);
  const allowed = ["gw.example.org", "*.edge.example"];
  for (
    const name of ["127.0.0.1", "10.1.2.3", "[::1]", "[fe80::1]", "localhost", "app.localhost"]
  ) {
    assert.ok(hostAllowed(name, []), name);
  }
  assert.ok(hostAllowed("privitty-edged", []), "a single label (container service name)");
  assert.ok(hostAllowed("gw.example.org", allowed));
  assert.ok(hostAllowed("a.edge.example", allowed));
  for (const name of ["evil.example", "gw.example.org.evil", "edge.example", "localhost.evil"]) {
    assert.ok(!hostAllowed(name, allowed), name);
  }
  assert.ok(hostAllowed("evil.example", "*"), "* turns the check off");
});

for (const cors of [false, true] as const) {
  const path = cors ? "Hono routes (--cors)" : "fast paths (no --cors)";
  Deno.test(`Host matrix over HTTP on the ${path}: a foreign name is refused, /health stays open`, async () => {
    await using s = served({ cors });
    const cases: [string, number | "pass"][] = [
      [`127.0.0.1:${s.port}`, "pass"],
      [`localhost:${s.port}`, "pass"],
      [`hmi.localhost:${s.port}`, "pass"],
      [`privitty-edged:${s.port}`, "pass"],
      [`[::1]:${s.port}`, "pass"],
      [`evil.example:${s.port}`, 403],
      [`rebind.attacker.test`, 403],
    ];
    for (const [host, expected] of cases) {
      for (const [route, send] of Object.entries(routeRequests(s.port, { Host: host }))) {
        const { status, text } = await send();
        if (route === "GET /health" || expected === "pass") {
          assert.notEqual(status, 403, `${route} Host ${host}: ${text}`);
        } else {
          assert.equal(status, 403, `${route} Host ${host}`);
          assert.match(text, /--allowed-hosts/, "the body names the option");
          assert.match(text, /EDGE_ALLOWED_HOSTS/);
        }
      }
    }
  });
}

Deno.test("--allowed-hosts admits the listed names (and * every name), on both paths", async () => {
  for (const cors of [false, true]) {
    await using listed = served({ cors, allowedHosts: ["gw.example.org"] });
    const ok = await routeRequests(listed.port, { Host: "gw.example.org" })["POST /rpc"]();
    assert.equal(ok.status, 200, ok.text);
    const other = await routeRequests(listed.port, { Host: "other.example.org" })
      ["GET /stream/1"]();
    assert.equal(other.status, 403, other.text);
    await using any = served({ cors, allowedHosts: "*" });
    const all = await routeRequests(any.port, { Host: "evil.example" })["POST /rpc"]();
    assert.equal(all.status, 200, all.text);
  }
});

Deno.test("without --cors, a request from another origin is refused (form post, no-cors fetch)", async () => {
  await using s = served();
  const self = `http://127.0.0.1:${s.port}`;
  const requests = (origin: Record<string, string>) => routeRequests(s.port, origin);
  for (const [route, send] of Object.entries(requests({ Origin: "https://evil.example" }))) {
    const { status, text } = await send();
    if (route === "GET /health") assert.equal(status, 200);
    else {
      assert.equal(status, 403, route);
      assert.match(text, /--cors=https:\/\/evil\.example/);
    }
  }
  // A form post: text/plain from another origin never reaches dispatch.
  const form = await fetch(`${s.base}/rpc`, {
    method: "POST",
    headers: { "Content-Type": "text/plain", Origin: "null" },
    body: RPC_BODY,
  });
  assert.equal(form.status, 403);
  await form.body?.cancel();
  // Same origin and no Origin at all (curl, the CLI) pass.
  for (const headers of [{ Origin: self }, {} as Record<string, string>]) {
    const res = await requests(headers)["POST /rpc"]();
    assert.equal(res.status, 200, res.text);
  }
});

Deno.test("--cors=<origins> answers only those origins; a bare --cors any; preflights and exposed headers", async () => {
  await using listed = served({ cors: ["https://hmi.example"] });
  const pre = await fetch(`${listed.base}/rpc`, {
    method: "OPTIONS",
    headers: {
      Origin: "https://hmi.example",
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type, authorization",
    },
  });
  await pre.body?.cancel();
  assert.equal(pre.headers.get("access-control-allow-origin"), "https://hmi.example");
  assert.equal(pre.headers.get("access-control-allow-methods"), "GET,HEAD,POST");
  const get = await fetch(`${listed.base}/health`, { headers: { Origin: "https://hmi.example" } });
  await get.body?.cancel();
  const exposed = get.headers.get("access-control-expose-headers") ?? "";
  for (const h of ["Content-Range", "X-Prv-Allow-Download", "Content-Disposition"]) {
    assert.ok(exposed.includes(h), `exposes ${h}: ${exposed}`);
  }
  const other = await routeRequests(listed.port, { Origin: "https://evil.example" })["POST /rpc"]();
  assert.equal(other.status, 403);
  const ok = await routeRequests(listed.port, { Origin: "https://hmi.example" })["POST /rpc"]();
  assert.equal(ok.status, 200, ok.text);
  await using any = served({ cors: true });
  const anyOrigin = await rpcCall(any.base, "get_connectivity", [1], undefined, {
    Origin: "https://evil.example",
  });
  assert.equal(anyOrigin.status, 200, await anyOrigin.text());
  assert.equal(anyOrigin.headers.get("access-control-allow-origin"), "*");
});

Deno.test("ApiTokens.parse() reads named scoped tokens and names the bad line", () => {
  const tokens = ApiTokens.parse(
    `# comment\n\nreader read sha256:${hex("r".repeat(20))}\nops read,send,admin sha256:${
      hex("o".repeat(20)).toUpperCase()
    }\n`,
    "tokens",
  );
  assert.equal(tokens.size, 2);
  assert.deepEqual([...tokens.check("r".repeat(20))!.scopes], ["read"]);
  assert.equal(tokens.check("o".repeat(20))!.name, "ops");
  assert.equal(tokens.check("nope"), undefined);
  assert.equal(tokens.check(undefined), undefined);
  assert.throws(() => ApiTokens.parse("x read sha256:abc", "f"), /f line 1 is not valid/);
  assert.throws(
    () => ApiTokens.parse(`x write sha256:${hex("a")}`, "f"),
    /f line 1: unknown scope "write"; expected read, send, admin/,
  );
  assert.throws(
    () => ApiTokens.parse(`x read sha256:${hex("a")}\nx send sha256:${hex("b")}`, "f"),
    /line 2: the name "x" is used twice/,
  );
  assert.throws(() => ApiTokens.parse("# none\n", "f"), ConfigError);
});

Deno.test("loadApiTokens(): off by default, one token, or a file; an unreadable file names itself", async () => {
  assert.equal(await loadApiTokens({ apiToken: undefined, apiTokensFile: undefined }), undefined);
  const single = await loadApiTokens({ apiToken: "s".repeat(20), apiTokensFile: undefined });
  assert.deepEqual([...single!.check("s".repeat(20))!.scopes], ["read", "send", "admin"]);
  const file = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(file, `bot send sha256:${hex("b".repeat(20))}\n`);
    const fromFile = await loadApiTokens({ apiToken: undefined, apiTokensFile: file });
    assert.equal(fromFile!.check("b".repeat(20))!.name, "bot");
  } finally {
    await Deno.remove(file);
  }
  await assert.rejects(
    loadApiTokens({ apiToken: undefined, apiTokensFile: "/nonexistent/tokens" }),
    /cannot read EDGE_API_TOKENS_FILE \/nonexistent\/tokens/,
  );
});

const READER = "reader-token-0123456789";
const SENDER = "sender-token-0123456789";
const ADMIN = "admin-token-0123456789";
const TOKENS_FILE = [
  `reader read sha256:${hex(READER)}`,
  `sender read,send sha256:${hex(SENDER)}`,
  `admin read,send,admin sha256:${hex(ADMIN)}`,
].join("\n");

function rpcCall(
  base: string,
  method: string,
  params: unknown[],
  token?: string,
  extra: Record<string, string> = {},
) {
  return fetch(`${base}/rpc`, {
    method: "POST",
    headers: {
      ...extra,
      "Content-Type": "application/json",
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 7 }),
  });
}

for (const cors of [false, true] as const) {
  const path = cors ? "Hono routes (--cors)" : "fast paths (no --cors)";
  Deno.test(`API tokens on the ${path}: 401 without, scopes per method, /health and /auth open`, async () => {
    await using s = served({ cors, tokens: ApiTokens.parse(TOKENS_FILE, "tokens") });
    for (const token of [undefined, "wrong-token-0123456789"]) {
      const res = await rpcCall(s.base, "get_info", [1], token);
      assert.equal(res.status, 401);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="edge-gateway"/);
      const body = await res.json();
      assert.equal(body.error.code, RpcCode.UNAUTHORIZED);
      assert.doesNotMatch(JSON.stringify(body), /wrong-token/, "the token is not echoed");
    }
    const lower = await fetch(`${s.base}/rpc`, {
      method: "POST",
      headers: { "Content-Type": "application/json", authorization: `bearer ${READER}` },
      body: RPC_BODY,
    });
    assert.equal(lower.status, 200, "the scheme is case-insensitive");
    await lower.body?.cancel();
    // read: get_* runs, sending is refused naming the scope, admin too
    const read = await (await rpcCall(s.base, "get_connectivity", [1], READER)).json();
    assert.equal(typeof read.result, "number");
    const send = await (await rpcCall(s.base, "send_msg", [1, 10, { text: "hi" }], READER)).json();
    assert.equal(send.error.code, RpcCode.FORBIDDEN);
    assert.match(send.error.message, /send_msg needs the "send" scope; this API token has read/);
    const activate = await (await rpcCall(s.base, "license_activate", [1, "https://x"], SENDER))
      .json();
    assert.equal(activate.error.code, RpcCode.FORBIDDEN);
    assert.match(activate.error.message, /"admin" scope/);
    // the product alias carries its method's scope
    const alias =
      await (await rpcCall(s.base, "privitty_send_file", [1, 1, 1, "/x", 1, 1, 1], READER))
        .json();
    assert.equal(alias.error.code, RpcCode.FORBIDDEN);
    // an admin token passes the scope check (the method then answers on its own terms)
    const admin = await (await rpcCall(s.base, "license_status", [1], ADMIN)).json();
    assert.ok("result" in admin, JSON.stringify(admin));
    // a batch: each member checked on its own
    const batch = await (await fetch(`${s.base}/rpc`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${READER}` },
      body: JSON.stringify([
        { jsonrpc: "2.0", method: "get_connectivity", params: [1], id: 1 },
        { jsonrpc: "2.0", method: "license_deactivate", params: [1], id: 2 },
      ]),
    })).json();
    assert.ok("result" in batch[0]);
    assert.equal(batch[1].error.code, RpcCode.FORBIDDEN);
    // /events: header or ?access_token= (EventSource)
    const noToken = await fetch(`${s.base}/events`);
    assert.equal(noToken.status, 401);
    assert.match(noToken.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.match((await noToken.json()).error, /access_token/);
    for (
      const res of [
        await fetch(`${s.base}/events`, { headers: { Authorization: `Bearer ${READER}` } }),
        await fetch(`${s.base}/events?access_token=${READER}`),
      ]
    ) {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "text/event-stream");
      await res.body?.cancel();
    }
    // /health stays open; the viewer keeps /auth (and its own token on /stream)
    const health = await fetch(`${s.base}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const token = await viewerToken(s.app);
    assert.ok(token.length > 0);
    const stream = await fetch(`${s.base}/stream/1`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.notEqual(stream.status, 401, "the viewer token, not an API token, opens /stream");
    await stream.body?.cancel();
  });
}

Deno.test("without tokens every method runs for any caller (the default)", async () => {
  await using s = served();
  const res = await (await rpcCall(s.base, "license_status", [1])).json();
  assert.ok("result" in res);
});
