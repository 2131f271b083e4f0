/** Tests of GET /health: a cheap 200 JSON report with connectivity, version, uptime, address. */
import assert from "node:assert/strict";
import { GATEWAY_VERSION } from "../../src/constants.ts";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import { mailState, serviceHealth } from "../../src/http/health_route.ts";
import { setLogSink } from "../../src/log.ts";
import { ConfigKey } from "../../src/store/mod.ts";
import { fakeServices } from "../rpc/_fake_services.ts";
import { testApp } from "./_app.ts";

Deno.test("GET /health answers 200 with status, connectivity, version, uptime", async () => {
  const t = testApp();
  try {
    const res = await t.app.request("/health");
    assert.equal(res.status, 200);
    // Content-Type only: extra headers take Deno.serve off its fast path (BENCHMARKS.md).
    assert.equal(res.headers.get("cache-control"), null);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      "connectivity",
      "disk",
      "mail",
      "service",
      "sse_clients",
      "status",
      "uptime_s",
      "version",
    ]);
    assert.equal(body.status, "ok");
    assert.equal(body.service, "privitty-edged");
    assert.equal(body.connectivity, 4000);
    assert.equal(body.mail, "connected");
    assert.equal(body.disk, "ok");
    assert.equal(body.version, GATEWAY_VERSION);
    assert.ok(body.uptime_s >= 4 && Number.isInteger(body.uptime_s));
    assert.equal(body.sse_clients, 0);
  } finally {
    t.close();
  }
});

Deno.test("GET /health starts with the product's status, service, version (product-compat.md#health-body)", async () => {
  const t = testApp();
  try {
    const body = await (await t.app.request("/health")).json();
    assert.deepEqual(Object.keys(body).slice(0, 3), ["status", "service", "version"]);
    assert.deepEqual(
      { status: body.status, service: body.service, version: body.version },
      { status: "ok", service: "privitty-edged", version: "0.1.0" },
    );
  } finally {
    t.close();
  }
});

Deno.test("GET /health counts open event streams", async () => {
  const t = testApp();
  try {
    const events = await t.app.request("/events");
    const body = await (await t.app.request("/health")).json();
    assert.equal(body.sse_clients, 1);
    await events.body?.cancel();
    assert.equal((await (await t.app.request("/health")).json()).sse_clients, 0);
  } finally {
    t.close();
  }
});

Deno.test("serviceHealth() reads the address once and the level on every call", () => {
  const s = fakeServices({ level: 3000 });
  try {
    s.store.config.set(ConfigKey.ADDR, "me@relay.example");
    const health = serviceHealth(s);
    assert.equal(health().addr, "me@relay.example");
    assert.equal(health().connectivity, 3000);
    s.connectivityLevel.value = 1000;
    s.store.config.set(ConfigKey.ADDR, "changed@relay.example");
    assert.equal(health().connectivity, 1000);
    assert.equal(health().addr, "me@relay.example");
  } finally {
    s.store.close();
  }
});

Deno.test("serviceHealth() says when the relay is unreachable (status stays ok: the daemon lives)", () => {
  const s = fakeServices({ level: 1000 });
  try {
    const health = serviceHealth(s);
    assert.equal(health().status, "ok");
    assert.equal(health().mail, "unreachable");
    s.connectivityLevel.value = 4000;
    assert.equal(health().mail, "connected");
  } finally {
    s.store.close();
  }
});

Deno.test("serviceHealth() names a TLS failure caused by the clock until a connection works", () => {
  const s = fakeServices({ level: 1000 });
  try {
    const connectivity = new ConnectivityMonitor({ publish: () => {} }, 1000);
    const health = serviceHealth({ ...s, connectivity });
    assert.equal(health().mail_error, undefined);
    assert.ok(!("mail_detail" in health()), "absent while there is nothing to say");
    const detail = "the relay's TLS certificate is expired at this device's clock " +
      "(2028-01-01T00:00:00.000Z): check the system clock";
    connectivity.report("smtp", { error: "tls_clock", detail });
    assert.equal(health().mail_error, "tls_clock");
    assert.equal(health().mail_detail, detail);
    assert.equal(health().status, "ok");
    connectivity.report("smtp", undefined); // the next send went through
    assert.deepEqual(Object.keys(health()).filter((k) => k.startsWith("mail_")), []);
  } finally {
    s.store.close();
  }
});

Deno.test("mailState() maps every contract §3.2 connectivity band", () => {
  assert.deepEqual(
    [0, 1, 1000, 1999, 2000, 2999, 3000, 3999, 4000, 5000].map(mailState),
    [
      "not_configured",
      "unreachable",
      "unreachable",
      "unreachable",
      "connecting",
      "connecting",
      "connected",
      "connected",
      "connected",
      "connected",
    ],
  );
});

Deno.test("serviceHealth() says disk: full from a write that found it full until one succeeds", () => {
  const s = fakeServices({ level: 4000 });
  const prev = setLogSink(() => {});
  try {
    const health = serviceHealth(s);
    assert.equal(health().disk, "ok");
    s.store.disk.noteFull("database or disk is full");
    assert.equal(health().disk, "full");
    assert.equal(health().status, "ok"); // alive: a probe must not restart it for this
    s.store.config.set(ConfigKey.DISPLAY_NAME, "after"); // a write that commits: space is back
    assert.equal(health().disk, "ok");
  } finally {
    setLogSink(prev);
    s.store.close();
  }
});
