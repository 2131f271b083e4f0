/**
 * The `GET /stream/<id>` fast path (`createApp().serverFetch` without CORS): every answer equals
 * the Hono route's byte for byte (status, headers, body), in process and over a real
 * `Deno.serve`; a handler failure gets the app's 500 answer.
 */
import assert from "node:assert/strict";
import { setLogSink } from "../../src/log.ts";
import { AccessDeniedError, DecryptError, type ProtectedFile } from "../../src/viewer/stream.ts";
import { chunked, pngBytes } from "../viewer/_fixtures.ts";
import { snapshot, testApp, viewerToken } from "./_app.ts";

const BYTES = pngBytes(200_000);

/** A fresh file for each open: id 7 downloadable, 8 view-only, 9 denied, 10 undecryptable. */
function openProtectedFile(id: number): Promise<ProtectedFile | undefined> {
  if (id === 9) return Promise.reject(new AccessDeniedError("revoked", "the owner revoked it"));
  if (id === 10) return Promise.reject(new DecryptError("bad key"));
  if (id === 11) return Promise.reject(new Error("the store is gone"));
  if (id !== 7 && id !== 8) return Promise.resolve(undefined);
  return Promise.resolve({
    plaintext: chunked(BYTES, 65_536).stream,
    size: BYTES.length,
    name: id === 7 ? "café.png" : "plan.png",
    mime: "image/png",
    allowDownload: id === 7,
    slice: (start, end) => chunked(BYTES.slice(start, end), 65_536).stream,
  });
}

/** [name, path, headers] of every request compared; the token is filled in per app. */
function cases(token: string): [string, string, Record<string, string>][] {
  const bearer = { Authorization: `Bearer ${token}` };
  return [
    ["no token", "/stream/7", {}],
    ["wrong token", "/stream/7", { Authorization: "Bearer nope" }],
    ["basic auth", "/stream/7", { Authorization: "Basic abc" }],
    ["whole file", "/stream/7", bearer],
    ["view-only file", "/stream/8", bearer],
    ["range", "/stream/7", { ...bearer, Range: "bytes=65530-70000" }],
    ["suffix range", "/stream/7", { ...bearer, Range: "bytes=-10" }],
    ["unsatisfiable range", "/stream/7", { ...bearer, Range: "bytes=200000-" }],
    ["several ranges (whole file)", "/stream/7", { ...bearer, Range: "bytes=0-1,5-6" }],
    ["access revoked", "/stream/9", bearer],
    ["decryption fails", "/stream/10", bearer],
    ["handler throws", "/stream/11", bearer],
    ["no such message", "/stream/12", bearer],
    ["id over 32 bits", "/stream/4294967296", bearer],
  ];
}

Deno.test("serverFetch answers GET /stream/<id> byte for byte as the Hono route", async () => {
  const t = testApp({ openProtectedFile });
  const lines: string[] = [];
  const prev = setLogSink((line) => lines.push(line));
  try {
    const token = await viewerToken(t.app);
    for (const [name, path, headers] of cases(token)) {
      const url = `http://localhost${path}`;
      const viaHono = await snapshot(await t.app.fetch(new Request(url, { headers })));
      const viaFast = await snapshot(await t.app.serverFetch(new Request(url, { headers })));
      assert.deepEqual(viaFast, viaHono, name);
    }
    const statuses = await Promise.all(
      cases(token).map(async ([, path, headers]) =>
        (await t.app.serverFetch(new Request(`http://localhost${path}`, { headers }))).status
      ),
    );
    assert.deepEqual(statuses, [
      401,
      401,
      401,
      200,
      200,
      206,
      206,
      416,
      200,
      403,
      500,
      500,
      404,
      404,
    ]);
    // The failure is logged the same way on both paths (once per path and request above).
    assert.equal(lines.filter((l) => l.includes('path="/stream/11"')).length, 3);
  } finally {
    setLogSink(prev);
    t.close();
  }
});

/** Sends one raw HTTP/1.1 request and returns the whole answer, its Date header removed. */
async function exchange(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(head));
    const parts: Uint8Array[] = [];
    const buf = new Uint8Array(65_536);
    for (let n; (n = await conn.read(buf)) !== null;) parts.push(buf.slice(0, n));
    const all = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
    let at = 0;
    for (const p of parts) (all.set(p, at), at += p.length);
    return new TextDecoder("latin1").decode(all).replace(/\r\ndate: [^\r]*/i, "");
  } finally {
    conn.close();
  }
}

Deno.test("over Deno.serve, GET /stream's wire bytes through the fast path equal the Hono route's", async () => {
  const t = testApp({ openProtectedFile });
  const prev = setLogSink(() => {});
  const opts = { hostname: "127.0.0.1", port: 0, onListen: () => {} };
  const hono = Deno.serve(opts, t.app.fetch);
  const fast = Deno.serve(opts, t.app.serverFetch);
  try {
    const token = await viewerToken(t.app);
    for (const [name, path, headers] of cases(token)) {
      const head = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
        Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n";
      const viaHono = await exchange(hono.addr.port, head);
      const viaFast = await exchange(fast.addr.port, head);
      assert.match(viaHono, /^HTTP\/1\.1 [0-9]{3} /, name);
      assert.equal(viaFast, viaHono, name);
    }
  } finally {
    await hono.shutdown();
    await fast.shutdown();
    setLogSink(prev);
    t.close();
  }
});

Deno.test("under --cors, /stream answers (401, 404, 206) carry the CORS headers", async () => {
  const t = testApp({ cors: true, openProtectedFile });
  const prev = setLogSink(() => {});
  try {
    assert.equal(t.app.serverFetch, t.app.fetch, "no fast path under --cors");
    const token = await viewerToken(t.app);
    const origin = { Origin: "http://viewer.example" };
    const answers = [
      await t.app.serverFetch(new Request("http://localhost/stream/7", { headers: origin })),
      await t.app.serverFetch(
        new Request("http://localhost/stream/12", {
          headers: { ...origin, Authorization: `Bearer ${token}` },
        }),
      ),
      await t.app.serverFetch(
        new Request("http://localhost/stream/7", {
          headers: { ...origin, Authorization: `Bearer ${token}`, Range: "bytes=0-9" },
        }),
      ),
    ];
    assert.deepEqual(answers.map((r) => r.status), [401, 404, 206]);
    for (const res of answers) {
      assert.equal(res.headers.get("access-control-allow-origin"), "*");
      assert.match(res.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/);
      await res.body?.cancel();
    }
  } finally {
    setLogSink(prev);
    t.close();
  }
});
