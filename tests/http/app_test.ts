/** Tests of the app shell: 404/405 JSON, CORS only with --cors, 500 JSON on failures. */
import assert from "node:assert/strict";
import { EventBus } from "../../src/events/bus.ts";
import { createApp } from "../../src/http/app.ts";
import { setLogSink } from "../../src/log.ts";
import { buildMethodTable } from "../../src/rpc/methods/mod.ts";
import { ViewerSessions } from "../../src/viewer/session.ts";
import { noProtectedFiles } from "../../src/viewer/stream.ts";
import { fakeServices } from "../rpc/_fake_services.ts";
import { testApp } from "./_app.ts";

Deno.test("createApp() answers unknown paths with 404 JSON naming the path", async () => {
  const t = testApp();
  try {
    for (const path of ["/", "/nope", "/rpc/x", "/stream/"]) {
      const res = await t.app.request(path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(await res.json(), { error: "not found", path });
    }
  } finally {
    t.close();
  }
});

Deno.test("createApp() answers a wrong method on a known path with 405 JSON and Allow", async () => {
  const t = testApp();
  try {
    const cases: [string, string, string][] = [
      ["GET", "/rpc", "POST"],
      ["PUT", "/rpc", "POST"],
      ["OPTIONS", "/rpc", "POST"],
      ["POST", "/health", "GET, HEAD"],
      ["DELETE", "/events", "GET, HEAD"],
      ["GET", "/auth", "POST"],
      ["POST", "/stream/12", "GET, HEAD"],
    ];
    for (const [method, path, allowed] of cases) {
      const res = await t.app.request(path, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), allowed);
      assert.deepEqual(await res.json(), { error: "method not allowed", method, allowed });
      assert.equal(res.headers.get("access-control-allow-origin"), null);
    }
  } finally {
    t.close();
  }
});

Deno.test("createApp() sends no CORS headers without --cors", async () => {
  const t = testApp({ cors: false });
  try {
    const res = await t.app.request("/health", { headers: { Origin: "https://ui.example" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), null);
    await res.body?.cancel();
    const pre = await t.app.request("/rpc", {
      method: "OPTIONS",
      headers: { Origin: "https://ui.example", "Access-Control-Request-Method": "POST" },
    });
    assert.equal(pre.status, 403, "another origin is refused without --cors (docs/access.md)");
    assert.equal(pre.headers.get("access-control-allow-origin"), null);
    await pre.body?.cancel();
  } finally {
    t.close();
  }
});

Deno.test("createApp() sends CORS headers and answers preflights with 204 under --cors", async () => {
  const t = testApp({ cors: true });
  try {
    const res = await t.app.request("/health", { headers: { Origin: "https://ui.example" } });
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    await res.body?.cancel();
    const pre = await t.app.request("/rpc", {
      method: "OPTIONS",
      headers: {
        Origin: "https://ui.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "*");
    assert.match(pre.headers.get("access-control-allow-methods") ?? "", /POST/);
    assert.match(pre.headers.get("access-control-allow-headers") ?? "", /content-type/i);
    const auth = await t.app.request("/stream/1", { headers: { Origin: "https://ui.example" } });
    assert.equal(auth.status, 401);
    assert.equal(auth.headers.get("access-control-allow-origin"), "*");
    assert.match(auth.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/);
    await auth.body?.cancel();
  } finally {
    t.close();
  }
});

Deno.test("createApp() answers an unexpected failure with 500 JSON and logs it", async () => {
  const services = fakeServices();
  const bus = new EventBus();
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    const app = createApp({
      services,
      methods: buildMethodTable(),
      bus,
      viewer: {
        sessions: new ViewerSessions({ fingerprint: "x", events: bus }),
        openProtectedFile: noProtectedFiles,
      },
      cors: false,
      ssePingMs: 1000,
      health: () => {
        throw new Error("probe broke");
      },
    });
    const res = await app.request("/health");
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: "internal error" });
    assert.ok(lines.some((l) => l.includes("probe broke")));
  } finally {
    setLogSink(prev);
    services.store.close();
  }
});
