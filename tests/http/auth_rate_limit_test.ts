/**
 * Tests of the `/auth` limit per client address: 429 with Retry-After after too many failures,
 * per client, cleared by the window's end or a success; failures logged as a summary. The
 * clock is injected.
 */
import assert from "node:assert/strict";
import { AuthRateLimit } from "../../src/http/auth_rate_limit.ts";
import { setLogSink } from "../../src/log.ts";
import { TEST_FINGERPRINT, testApp } from "./_app.ts";

const WRONG = { fingerprint: "00".repeat(32) };

function auth(app: ReturnType<typeof testApp>["app"], body: unknown, ip: string) {
  return Promise.resolve(app.request("/auth", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }, { remoteAddr: { transport: "tcp", hostname: ip, port: 40000 } }));
}

async function status(res: Response): Promise<number> {
  await res.body?.cancel();
  return res.status;
}

function setup() {
  const clock = { now: 1_000_000 };
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const limit = new AuthRateLimit({ maxFailures: 3, windowMs: 60_000, now: () => clock.now });
  const t = testApp({ authRateLimit: limit });
  return {
    t,
    clock,
    lines,
    [Symbol.dispose]() {
      setLogSink(prev);
      t.close();
    },
  };
}

Deno.test("POST /auth answers 429 with Retry-After once a client failed too often", async () => {
  using s = setup();
  for (let i = 0; i < 3; i++) {
    assert.equal(await status(await auth(s.t.app, WRONG, "10.0.0.1")), 403);
  }
  s.clock.now += 20_000;
  const refused = await auth(s.t.app, WRONG, "10.0.0.1");
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "40");
  assert.match((await refused.json()).error, /too many failed viewer authentication attempts/);
  // Even the right fingerprint waits: guessing must not go on.
  assert.equal(
    await status(await auth(s.t.app, { fingerprint: TEST_FINGERPRINT }, "10.0.0.1")),
    429,
  );
  // Another client is not affected.
  assert.equal(await status(await auth(s.t.app, WRONG, "10.0.0.2")), 403);
  // The window ends: the client may try again.
  s.clock.now += 40_000;
  assert.equal(
    await status(await auth(s.t.app, { fingerprint: TEST_FINGERPRINT }, "10.0.0.1")),
    200,
  );
});

Deno.test("POST /auth: a success clears the client's failures", async () => {
  using s = setup();
  for (let i = 0; i < 2; i++) {
    assert.equal(await status(await auth(s.t.app, WRONG, "10.0.0.1")), 403);
  }
  assert.equal(
    await status(await auth(s.t.app, { fingerprint: TEST_FINGERPRINT }, "10.0.0.1")),
    200,
  );
  for (let i = 0; i < 3; i++) {
    assert.equal(await status(await auth(s.t.app, WRONG, "10.0.0.1")), 403);
  }
  assert.equal(await status(await auth(s.t.app, WRONG, "10.0.0.1")), 429);
});

Deno.test("failed /auth attempts are logged as one line, then one summary per minute", async () => {
  using s = setup();
  for (let i = 0; i < 200; i++) {
    await status(await auth(s.t.app, WRONG, `10.0.${i % 4}.1`));
    s.clock.now += 100; // 200 attempts in 20 s
  }
  const warns = () => s.lines.filter((l) => / WARN /.test(l));
  assert.equal(warns().length, 1);
  assert.match(warns()[0], /\[viewer\] viewer authentication failed client="10\.0\.0\.1"/);
  s.clock.now += 60_000;
  await status(await auth(s.t.app, WRONG, "10.0.9.1"));
  assert.equal(warns().length, 3); // the summary, then the next period's first line
  assert.match(
    warns()[1],
    /viewer authentication failures seconds=80 failed=12 refused_429=188 clients=4/,
  );
});

Deno.test("AuthRateLimit remembers a bounded number of clients", () => {
  const limit = new AuthRateLimit({ maxFailures: 1, maxClients: 2, now: () => 0 });
  const prev = setLogSink(() => {});
  try {
    limit.failed("a");
    limit.failed("b");
    limit.failed("c"); // "a" is forgotten
    assert.equal(limit.retryAfter("a"), undefined);
    assert.equal(limit.retryAfter("b"), 60);
    assert.equal(limit.retryAfter("c"), 60);
  } finally {
    setLogSink(prev);
  }
});
