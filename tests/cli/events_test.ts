/**
 * `events` as a subprocess against a fake SSE stream that drops the connection every few events:
 * NDJSON output, reconnection with the right Last-Event-ID, no duplicates, filters, signals.
 */
import assert from "node:assert/strict";
import {
  type FakeDaemon,
  type FakeDaemonOptions,
  type FakeEvent,
  startFakeDaemon,
} from "./fixtures/fake_daemon.ts";
import { type CliRun, closedPortUrl, runCli, spawnCli } from "./fixtures/run_cli.ts";
import { toWire } from "../../src/events/types.ts";

const EVENTS: FakeEvent[] = [
  { id: 1, event: { kind: "IncomingMsg", chatId: 10, msgId: 41 } },
  { id: 2, event: { kind: "MsgDelivered", chatId: 10, msgId: 40 } },
  { id: 3, event: { kind: "IncomingMsg", chatId: 11, msgId: 42 } },
  { id: 4, event: { kind: "ConnectivityChanged", connectivity: 4000 } },
  { id: 5, event: { kind: "lag", dropped: 3, oldestAvailable: 9 } },
  { id: 6, event: { kind: "IncomingMsg", chatId: 10, msgId: 43 } },
  { id: 7, event: { kind: "MsgRead", chatId: 10, msgId: 40 } },
];

/** The NDJSON line `events` prints for one event: its id, then the wire object. */
const line = (e: FakeEvent) => JSON.stringify({ id: e.id, ...toWire(e.event) });

/**
 * Runs `events` until it printed `expected`, stops it with `signal`, and checks it exited 0
 * having printed exactly those NDJSON lines. Returns its stderr and the Last-Event-ID headers.
 */
async function follow(
  events: NonNullable<FakeDaemonOptions["events"]>,
  args: string[],
  expected: FakeEvent[],
  signal: Deno.Signal = "SIGTERM",
  beforeStop: (daemon: FakeDaemon) => Promise<void> = () => Promise.resolve(),
): Promise<{ stderr: string; requests: (string | null)[] }> {
  const daemon = await startFakeDaemon({ events });
  const cli = spawnCli(["events", "--url", daemon.url, ...args]);
  const want = expected.map(line);
  let run: CliRun;
  try {
    assert.deepEqual(await cli.lines(want.length), want);
    await beforeStop(daemon);
  } finally {
    run = await cli.stop(signal);
    await daemon.close();
  }
  assert.equal(run.code, 0, `exit code after ${signal}; stderr: ${run.stderr}`);
  assert.deepEqual(run.stdout.trimEnd().split("\n"), want, "no duplicate or extra lines");
  return { stderr: run.stderr, requests: daemon.eventRequests };
}

/** Waits until the CLI has reconnected `count` times, then a little longer (stream held open). */
function reconnected(count: number) {
  return async (daemon: FakeDaemon) => {
    for (let i = 0; i < 100 && daemon.eventRequests.length < count; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 100));
  };
}

Deno.test("events prints NDJSON and resumes with Last-Event-ID after each drop", async () => {
  const events = { list: EVENTS, perConnection: 3 };
  // Stop it while the last connection is open and idle, not while it waits to reconnect.
  const { requests, stderr } = await follow(events, [], EVENTS, "SIGTERM", reconnected(4));
  assert.equal(
    line(EVENTS[0]),
    '{"id":1,"type":"IncomingMsg","account_id":1,"chat_id":10,"msg_id":41}',
  );
  assert.equal(
    line(EVENTS[4]),
    '{"id":5,"type":"lag","account_id":1,"dropped":3,"oldest_available":9}',
  );
  assert.deepEqual(requests, [null, "3", "6", "7"]);
  assert.match(stderr, /event stream closed by the gateway \(will resume after event 3\)/);
  assert.match(stderr, /reconnecting in 0\.5 s/);
  const connected = stderr.split("\n").filter((l) => l.includes("connected to"));
  assert.equal(connected.length, 4, "one 'connected' notice per connection");
  assert.match(
    connected[0],
    /events: connected to http:\/\/127\.0\.0\.1:\d+\/events \(live events\)/,
  );
  assert.match(connected[1], /\(resuming after id 3\)/);
});

Deno.test("events drops events a server replays after a reconnect (no duplicates)", async () => {
  const events = { list: EVENTS, perConnection: 3, replayOverlap: 2, retryMs: 100 };
  const { requests, stderr } = await follow(events, [], EVENTS);
  assert.deepEqual(requests.slice(0, 4), [null, "3", "4", "5"]);
  assert.match(stderr, /reconnecting in 0\.1 s/); // the server's retry: field
});

Deno.test("events accepts a restarted sequence announced by a new lag event", async () => {
  const before: FakeEvent[] = [{ id: 11, event: { kind: "IncomingMsg", chatId: 10, msgId: 50 } }];
  const after: FakeEvent[] = [
    { id: 1, event: { kind: "lag", dropped: 0, oldestAvailable: 1 } },
    { id: 2, event: { kind: "IncomingMsg", chatId: 10, msgId: 51 } },
  ];
  const events = { list: [], connections: [before, after], perConnection: 0, retryMs: 50 };
  const { requests } = await follow(events, [], [...before, ...after]);
  assert.deepEqual(requests.slice(0, 2), [null, "11"]);
});

Deno.test("events --since and --type filter (--kind too); lag is always shown; SIGINT exits 0", async () => {
  const expected = EVENTS.filter((e) => e.id > 2 && e.event.kind !== "ConnectivityChanged");
  const args = ["--since", "2", "--type", "IncomingMsg", "--kind=MsgRead"];
  const { requests } = await follow({ list: EVENTS, perConnection: 2 }, args, expected, "SIGINT");
  assert.deepEqual(requests.slice(0, 3), ["2", "4", "6"]);
});

Deno.test("events exits 3 when the gateway is unreachable at start", async () => {
  const run = await runCli(["events", "--url", closedPortUrl()]);
  assert.equal(run.code, 3);
  assert.match(run.stderr, /cannot reach the gateway at .*\/events: connection refused/);
});
