/** ImapLoop without a relay: back-off arithmetic, and a dead server never crashes the loop. */
import assert from "node:assert/strict";
import { Connectivity } from "../../src/constants.ts";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import type { GatewayEvent } from "../../src/events/types.ts";
import { setLogSink } from "../../src/log.ts";
import { backoffDelay, ImapLoop } from "../../src/transport/imap_loop.ts";
import { freePort } from "../_helpers/ports.ts";

Deno.test("backoffDelay() doubles from min to max with ±20 % jitter", () => {
  const bounds = { min: 500, max: 30_000 };
  const mid = () => 0.5;
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelay(n, bounds, mid)), [
    500,
    1000,
    2000,
    4000,
    8000,
    16000,
    30000,
    30000,
    30000,
  ]);
  assert.equal(backoffDelay(1, bounds, () => 0), 800);
  assert.equal(backoffDelay(1, bounds, () => 0.9999), 1200);
});

Deno.test("ImapLoop against a closed port reports connecting/not connected, retries, and stops cleanly", async () => {
  const events: GatewayEvent[] = [];
  const sink = { publish: (e: GatewayEvent) => events.push(e) };
  const connectivity = new ConnectivityMonitor(sink);
  const port = freePort();
  const endpoint = { host: "127.0.0.1", port, security: "ssl" as const, user: "a@b.c" };
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const loop = new ImapLoop({
    params: { imap: endpoint, smtp: endpoint },
    password: "pw-never-logged",
    connectivity,
    events: sink,
    backoff: { min: 20, max: 40 },
  });
  const ac = new AbortController();
  try {
    loop.start(ac.signal);
    await new Promise((r) => setTimeout(r, 400));
    ac.abort();
    await loop.stop();
  } finally {
    setLogSink(prev);
  }
  const levels = events.flatMap((e) => e.kind === "ConnectivityChanged" ? [e.connectivity] : []);
  assert.deepEqual(levels.slice(0, 4), [
    Connectivity.CONNECTING,
    Connectivity.NOT_CONNECTED,
    Connectivity.CONNECTING,
    Connectivity.NOT_CONNECTED,
  ]);
  assert.equal(connectivity.level(), Connectivity.NOT_CONNECTED);
  const attempts = lines.filter((l) => l.includes("reconnecting")).length;
  assert.ok(attempts >= 3, `retried ${attempts} times`);
  assert.ok(lines.some((l) => l.includes("ECONNREFUSED")), "the cause is logged");
  assert.ok(lines.every((l) => !l.includes("pw-never-logged")));
});

Deno.test("ImapLoop.stop() ends a back-off sleep of an hour", async () => {
  const port = freePort();
  const endpoint = { host: "127.0.0.1", port, security: "ssl" as const, user: "a@b.c" };
  const levels: number[] = [];
  const prev = setLogSink(() => {});
  const loop = new ImapLoop({
    params: { imap: endpoint, smtp: endpoint },
    password: "pw",
    connectivity: { set: (l) => levels.push(l) },
    events: { publish: () => {} },
    backoff: { min: 3_600_000, max: 3_600_000 },
  });
  try {
    loop.start(new AbortController().signal);
    while (!levels.includes(Connectivity.NOT_CONNECTED)) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // The first attempt failed: the loop now sleeps an hour. stop() must end that sleep (the
    // race only turns a hang into a failure with a reason).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<string>((r) => timer = setTimeout(() => r("still sleeping"), 30_000));
    const outcome = await Promise.race([loop.stop().then(() => "stopped"), hung]);
    clearTimeout(timer);
    assert.equal(outcome, "stopped");
    assert.deepEqual(levels, [
      Connectivity.CONNECTING,
      Connectivity.NOT_CONNECTED,
      Connectivity.NOT_CONNECTED,
    ]);
  } finally {
    setLogSink(prev);
  }
});
