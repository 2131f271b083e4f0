/**
 * In-process tests of `followEvents` against the fake daemon: the idle watchdog, stopping on the
 * signal while a stream is open, a 204 from the server, and a failing first connection.
 */
import assert from "node:assert/strict";
import { UnreachableError } from "../../src/cli/rpc_client.ts";
import { followEvents, type SseMessage } from "../../src/cli/sse_client.ts";
import { type FakeEvent, startFakeDaemon } from "./fixtures/fake_daemon.ts";
import { closedPortUrl } from "./fixtures/run_cli.ts";

const FAST = { initialMs: 50, maxMs: 100, idleMs: 300 };

Deno.test("followEvents() reconnects when an open stream stays silent past idleMs", async () => {
  const daemon = await startFakeDaemon({ events: { list: [], perConnection: 0 } });
  const stop = new AbortController();
  const notices: string[] = [];
  try {
    const ended = followEvents({
      http: { baseUrl: daemon.url, timeoutMs: 1000, signal: stop.signal },
      policy: FAST,
      onEvent: () => Promise.resolve(),
      onNotice: (text) => Promise.resolve(void notices.push(text)),
    });
    while (daemon.eventRequests.length < 2) await new Promise((r) => setTimeout(r, 20));
    stop.abort(); // while the second stream is open
    assert.equal(await ended, "aborted");
  } finally {
    await daemon.close();
  }
  assert.match(notices[0], /no data for 0.3 s \(keepalive pings missing\)/);
});

Deno.test("followEvents() delivers events and stops on the signal mid-stream", async () => {
  const list: FakeEvent[] = [
    { id: 1, event: { kind: "Info", msg: "a" } },
    { id: 2, event: { kind: "Info", msg: "b" } },
  ];
  const daemon = await startFakeDaemon({ events: { list, perConnection: 1, retryMs: 10 } });
  const stop = new AbortController();
  const got: SseMessage[] = [];
  try {
    const end = await followEvents({
      http: { baseUrl: daemon.url, timeoutMs: 1000, signal: stop.signal },
      policy: FAST,
      onEvent: (m) => {
        got.push(m);
        if (got.length === 2) setTimeout(() => stop.abort(), 100);
        return Promise.resolve();
      },
      onNotice: () => Promise.resolve(),
    });
    assert.equal(end, "aborted");
  } finally {
    await daemon.close();
  }
  assert.deepEqual(
    got.map((m) => [m.id, m.event, JSON.parse(m.data).type, JSON.parse(m.data).msg]),
    [
      ["1", "message", "Info", "a"],
      ["2", "message", "Info", "b"],
    ],
  );
  assert.deepEqual(daemon.eventRequests.slice(0, 2), [null, "1"]);
});

Deno.test("followEvents() ends on HTTP 204 and throws when the first connection fails", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(null, { status: 204 }),
  );
  try {
    const end = await followEvents({
      http: { baseUrl: `http://127.0.0.1:${server.addr.port}`, timeoutMs: 1000 },
      onEvent: () => Promise.resolve(),
      onNotice: () => Promise.resolve(),
    });
    assert.equal(end, "server-stop");
  } finally {
    await server.shutdown();
  }
  await assert.rejects(
    followEvents({
      http: { baseUrl: closedPortUrl(), timeoutMs: 1000 },
      onEvent: () => Promise.resolve(),
      onNotice: () => Promise.resolve(),
    }),
    UnreachableError,
  );
});
