/** Tests of POST /auth and GET /stream/:msg_id: status codes, session rules, sniffed streaming. */
import assert from "node:assert/strict";
import { parseRange } from "../../src/http/viewer_routes.ts";
import { setLogSink } from "../../src/log.ts";
import { AccessDeniedError, DecryptError, type ProtectedFile } from "../../src/viewer/stream.ts";
import { chunked, pngBytes } from "../viewer/_fixtures.ts";
import { TEST_FINGERPRINT, testApp, type TestAppOptions, viewerToken } from "./_app.ts";

type App = ReturnType<typeof testApp>["app"];

function auth(app: App, body: unknown): Promise<Response> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return Promise.resolve(
    app.request("/auth", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: text,
    }),
  );
}

function stream(app: App, path: string, bearer?: string, method = "GET"): Promise<Response> {
  const headers: Record<string, string> = bearer === undefined
    ? {}
    : { Authorization: `Bearer ${bearer}` };
  return Promise.resolve(app.request(path, { method, headers }));
}

async function withApp(
  options: TestAppOptions,
  fn: (t: ReturnType<typeof testApp>) => Promise<void>,
) {
  const t = testApp(options);
  const prev = setLogSink(() => {});
  try {
    await fn(t);
  } finally {
    setLogSink(prev);
    t.close();
  }
}

Deno.test("POST /auth issues a bearer token for the device fingerprint", async () => {
  await withApp({ tokenLifetimeMs: 900_000 }, async (t) => {
    const res = await auth(t.app, { fingerprint: TEST_FINGERPRINT });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["expires_at", "expires_in", "token", "token_type"]);
    assert.equal(body.token_type, "Bearer");
    assert.match(body.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(body.expires_in, 900);
    assert.equal(body.expires_at, Math.floor((t.clock.now + 900_000) / 1000));
    const alias = await auth(t.app, { device_fingerprint: TEST_FINGERPRINT.toUpperCase() });
    assert.equal(alias.status, 200);
    await alias.body?.cancel();
  });
});

Deno.test("POST /auth takes the product's request and answers expires_in 3600 by default (product-compat.md#viewer-auth)", async () => {
  await withApp({}, async (t) => {
    const res = await auth(t.app, { device_fingerprint: TEST_FINGERPRINT });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.expires_in, 3600);
    assert.match(body.token, /^[A-Za-z0-9_-]{43}$/);
    const wrong = await auth(t.app, { device_fingerprint: "ab".repeat(32) });
    assert.equal(wrong.status, 403);
    assert.deepEqual(await wrong.json(), { error: "Device fingerprint mismatch" });
  });
});

Deno.test("POST /auth answers 403 for a wrong or missing fingerprint, 400 for bad JSON", async () => {
  await withApp({}, async (t) => {
    for (const body of [{ fingerprint: "00".repeat(32) }, {}, { fingerprint: 5 }]) {
      const res = await auth(t.app, body);
      assert.equal(res.status, 403, JSON.stringify(body));
      assert.deepEqual(await res.json(), { error: "Device fingerprint mismatch" });
    }
    for (const body of ["{nope", "[1]", "null", "x".repeat(20_000)]) {
      const res = await auth(t.app, body);
      assert.equal(res.status, 400, body.slice(0, 10));
      assert.deepEqual(await res.json(), {
        error: 'request body must be a JSON object: {"device_fingerprint": "<hex>"}',
      });
    }
  });
});

Deno.test("GET /stream answers 401 with WWW-Authenticate for missing, invalid, expired tokens", async () => {
  await withApp({ tokenLifetimeMs: 60_000 }, async (t) => {
    const missing = await stream(t.app, "/stream/10");
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="edge-gateway"');
    assert.deepEqual(await missing.json(), { error: "viewer token missing" });
    const basic = await t.app.request("/stream/10", { headers: { Authorization: "Basic abc" } });
    assert.equal(basic.status, 401);
    assert.deepEqual(await basic.json(), { error: "viewer token missing" });
    const invalid = await stream(t.app, "/stream/10", "not-the-token");
    assert.equal(invalid.status, 401);
    assert.match(invalid.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.deepEqual(await invalid.json(), { error: "viewer token invalid" });
    const good = await viewerToken(t.app);
    t.clock.now += 60_000;
    const expired = await stream(t.app, "/stream/10", good);
    assert.equal(expired.status, 401);
    assert.deepEqual(await expired.json(), { error: "viewer token expired" });
  });
});

Deno.test("POST /auth replaces the single session: the old token gets 401", async () => {
  await withApp({}, async (t) => {
    const first = await viewerToken(t.app);
    const second = await viewerToken(t.app);
    const old = await stream(t.app, "/stream/10", first);
    assert.equal(old.status, 401);
    await old.body?.cancel();
    const current = await stream(t.app, "/stream/10", second);
    assert.equal(current.status, 404, "authorized; no such file");
    await current.body?.cancel();
  });
});

Deno.test("GET /stream answers 404 for a non-integer id and a missing message or file", async () => {
  const asked: number[] = [];
  const openProtectedFile = (id: number) => {
    asked.push(id);
    return Promise.resolve(undefined);
  };
  await withApp({ openProtectedFile }, async (t) => {
    const tok = await viewerToken(t.app);
    for (const id of ["abc", "1.5", "-1", "4294967296", "99999999999"]) {
      const res = await stream(t.app, `/stream/${id}`, tok);
      assert.equal(res.status, 404, id);
      assert.deepEqual(await res.json(), { error: "message or file not found" });
    }
    const res = await stream(t.app, "/stream/42", tok);
    assert.equal(res.status, 404);
    await res.body?.cancel();
    assert.deepEqual(asked, [42]);
  });
});

Deno.test("GET /stream streams plaintext with the sniffed Content-Type (image/png)", async () => {
  const bytes = pngBytes(20_000);
  const source = chunked(bytes, 512);
  const openProtectedFile = (id: number): Promise<ProtectedFile | undefined> =>
    Promise.resolve(
      id === 7 ? { plaintext: source.stream, size: bytes.length, name: "café.png" } : undefined,
    );
  await withApp({ openProtectedFile }, async (t) => {
    const tok = await viewerToken(t.app);
    const sub = t.bus.subscribe();
    const res = await stream(t.app, "/stream/7", tok);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(
      res.headers.get("content-disposition"),
      `inline; filename="caf_.png"; filename*=UTF-8''caf%C3%A9.png`,
    );
    assert.ok(source.state.pulled < bytes.length, "not buffered whole before responding");
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
    const events = await sub.next();
    assert.deepEqual(events.at(-1)?.event, {
      type: "ViewerFileStreamed",
      account_id: 1,
      msg_id: 7,
      bytes: 20_000,
    });
    sub.close();
  });
});

Deno.test("GET /stream sends a source's own body when it offers one; plaintext stays unread", async () => {
  const bytes = pngBytes(20_000);
  let plaintextPulled = false;
  const plaintext = new ReadableStream<Uint8Array>({
    pull() {
      plaintextPulled = true;
    },
  }, { highWaterMark: 0 });
  const openProtectedFile = (id: number): Promise<ProtectedFile | undefined> =>
    Promise.resolve(
      id === 7
        ? {
          plaintext,
          size: bytes.length,
          mime: "image/png",
          body: (onEnd) =>
            new ReadableStream({
              start(c) {
                c.enqueue(bytes);
                c.close();
                onEnd(bytes.length);
              },
            }),
        }
        : undefined,
    );
  await withApp({ openProtectedFile }, async (t) => {
    const tok = await viewerToken(t.app);
    const sub = t.bus.subscribe();
    const res = await stream(t.app, "/stream/7", tok);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("content-length"), String(bytes.length));
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
    assert.equal(plaintextPulled, false);
    const events = await sub.next();
    assert.deepEqual(events.map((e) => e.event.type), ["ViewerFileStreamed"]);
    sub.close();
  });
});

Deno.test("GET /stream answers 500 when decryption fails", async () => {
  const openFails = () => Promise.reject(new DecryptError("bad key"));
  await withApp({ openProtectedFile: openFails }, async (t) => {
    const res = await stream(t.app, "/stream/7", await viewerToken(t.app));
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: "decryption failed" });
  });
  const headFails = () =>
    Promise.resolve({
      plaintext: new ReadableStream<Uint8Array>({
        pull: () => Promise.reject(new DecryptError("authentication tag mismatch")),
      }),
    });
  await withApp({ openProtectedFile: headFails }, async (t) => {
    const res = await stream(t.app, "/stream/7", await viewerToken(t.app));
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: "decryption failed" });
  });
});

Deno.test("HEAD /stream answers headers and releases the plaintext", async () => {
  const source = chunked(pngBytes(50_000), 1000);
  const openProtectedFile = () => Promise.resolve({ plaintext: source.stream });
  await withApp({ openProtectedFile }, async (t) => {
    const res = await stream(t.app, "/stream/7", await viewerToken(t.app), "HEAD");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("content-disposition"), "inline");
    assert.equal(source.state.cancelled, true);
  });
});

/** A file with `slice()` over `bytes`, as the protected-file source gives one. */
function sliceable(bytes: Uint8Array, allowDownload: boolean): ProtectedFile {
  return {
    plaintext: chunked(bytes, 4096).stream,
    size: bytes.length,
    name: "plan.png",
    mime: "image/png",
    allowDownload,
    slice: (start, end) => chunked(bytes.slice(start, end), 4096).stream,
  };
}

Deno.test("GET /stream with Range answers 206 with the bytes; beyond the end 416", async () => {
  const bytes = pngBytes(200_000);
  const openProtectedFile = () => Promise.resolve(sliceable(bytes, true));
  await withApp({ openProtectedFile }, async (t) => {
    const tok = await viewerToken(t.app);
    const full = await stream(t.app, "/stream/7", tok);
    assert.equal(full.status, 200);
    assert.equal(full.headers.get("content-length"), "200000");
    assert.equal(full.headers.get("accept-ranges"), "bytes");
    assert.match(full.headers.get("content-disposition")!, /^attachment; filename="plan.png"/);
    assert.equal(full.headers.get("x-prv-allow-download"), null);
    assert.deepEqual(new Uint8Array(await full.arrayBuffer()), bytes);
    for (
      const [range, start, end] of [
        ["bytes=100-199", 100, 200],
        ["bytes=199990-", 199_990, 200_000],
        ["bytes=-10", 199_990, 200_000],
        ["bytes=65530-70000", 65_530, 70_001],
      ] as const
    ) {
      const res = await Promise.resolve(t.app.request("/stream/7", {
        headers: { Authorization: `Bearer ${tok}`, Range: range },
      }));
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get("content-range"), `bytes ${start}-${end - 1}/200000`);
      assert.equal(res.headers.get("content-length"), String(end - start));
      assert.equal(res.headers.get("content-type"), "image/png");
      assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes.slice(start, end), range);
    }
    const beyond = await Promise.resolve(t.app.request("/stream/7", {
      headers: { Authorization: `Bearer ${tok}`, Range: "bytes=200000-" },
    }));
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get("content-range"), "bytes */200000");
  });
});

Deno.test("GET /stream states allow_download=false: inline, no-store and the rule header", async () => {
  const openProtectedFile = () => Promise.resolve(sliceable(pngBytes(1000), false));
  await withApp({ openProtectedFile }, async (t) => {
    const res = await stream(t.app, "/stream/7", await viewerToken(t.app));
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-disposition")!, /^inline; /);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(res.headers.get("x-prv-allow-download"), "false");
    await res.body?.cancel();
  });
});

Deno.test("GET /stream answers 403 with the state when access is not active", async () => {
  for (const state of ["revoked", "expired", "requested"]) {
    const openProtectedFile = () => Promise.reject(new AccessDeniedError(state, `it is ${state}`));
    await withApp({ openProtectedFile }, async (t) => {
      const res = await stream(t.app, "/stream/7", await viewerToken(t.app));
      assert.equal(res.status, 403);
      assert.deepEqual(await res.json(), {
        error: `access to this file is ${state}: it is ${state}`,
        state,
        reason: `it is ${state}`,
      });
    });
  }
});

Deno.test("parseRange() reads one byte range and rejects what is outside", () => {
  assert.deepEqual(parseRange("bytes=0-0", 10), { start: 0, end: 1 });
  assert.deepEqual(parseRange("bytes=5-100", 10), { start: 5, end: 10 });
  assert.equal(parseRange("bytes=0-1,3-4", 10), undefined);
  assert.equal(parseRange("items=0-1", 10), undefined);
  assert.equal(parseRange(undefined, 10), undefined);
  assert.equal(parseRange("bytes=10-", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=-0", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=4-2", 10), "unsatisfiable");
});
