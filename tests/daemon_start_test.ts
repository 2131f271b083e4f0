/**
 * Tests of the daemon's start: the listen address is checked before anything is provisioned, and
 * the events provisioning publishes (before the server listens) are there to replay.
 */
import assert from "node:assert/strict";
import { checkListenAddress } from "../src/daemon_start.ts";
import { describeError, StartupError } from "../src/errors.ts";
import { type DaemonProcess, spawnDaemon } from "./_helpers/daemon.ts";
import { NO_RELAY, startRelay } from "./_helpers/relay.ts";
import { makeTempDir } from "./_helpers/temp.ts";

Deno.test("checkListenAddress() refuses a port in use with one clear message", () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = taken.addr.port;
  assert.throws(() => checkListenAddress({ host: "127.0.0.1", port }), (err: Error) => {
    assert.ok(err instanceof StartupError);
    const text = describeError(err);
    assert.match(
      text,
      new RegExp(
        `^cannot listen on 127\\.0\\.0\\.1:${port}: Address already in use \\(os error \\d+\\); ` +
          "another program is listening there: stop it or choose another --port$",
      ),
    );
    assert.equal(text.split("Address already in use").length, 2, "the OS error once");
    return true;
  });
});

Deno.test("checkListenAddress() leaves a free port free for the server", () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = probe.addr.port;
  probe.close();
  checkListenAddress({ host: "127.0.0.1", port });
  using again = Deno.listen({ hostname: "127.0.0.1", port });
  assert.equal(again.addr.port, port);
});

Deno.test("describeError() keeps the cause chain but not a cause the message already quotes", () => {
  const os = new Error("Address already in use (os error 98)");
  const err = new StartupError(`cannot listen on h:1: ${os.message}`, undefined, { cause: os });
  assert.equal(describeError(err), "cannot listen on h:1: Address already in use (os error 98)");
  const chained = new Error("outer", { cause: new Error("inner", { cause: "root" }) });
  assert.equal(describeError(chained), "outer: inner: root");
});

/**
 * The events `/events?lastEventId=0` replays on `daemon`: those before the live ChatModified a
 * group created after connecting causes. Bounded: throws after 30 s.
 */
async function replayedEvents(daemon: DaemonProcess): Promise<{ id: number; type: string }[]> {
  const stop = AbortSignal.timeout(30_000);
  const res = await fetch(`${daemon.url}/events?lastEventId=0`, { signal: stop });
  const created = daemon.rpc("create_group_chat", [1, "after the replay", false]);
  const seen: { id: number; type: string }[] = [];
  let text = "";
  for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
      const frame = text.slice(0, end);
      text = text.slice(end + 2);
      const id = /^id: (\d+)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (id === undefined || data === undefined) continue;
      const event = JSON.parse(data) as { type: string; chat_id?: number };
      const group = (await created)?.result;
      if (event.type === "ChatModified" && event.chat_id === group) {
        await res.body?.cancel().catch(() => {});
        return seen;
      }
      seen.push({ id: Number(id), type: event.type });
    }
  }
  throw new Error(`/events ended: ${JSON.stringify(seen)}`);
}

Deno.test({
  name: "ConfigureProgress of the first start precedes the server, so /events replays it",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("start-events");
    const first = spawnDaemon({ relay, dataDir: `${tmp.path}/data` });
    let progress: { id: number; type: string }[];
    try {
      await first.waitHealthy();
      const events = await replayedEvents(first);
      progress = events.filter((e) => e.type === "ConfigureProgress");
      assert.ok(progress.length >= 1, JSON.stringify(events));
      assert.deepEqual(events.slice(0, progress.length), progress, "the run's first events");
    } finally {
      assert.equal(await first.stop(), 0, first.output());
    }
    const again = spawnDaemon({ relay, dataDir: `${tmp.path}/data` });
    try {
      await again.waitHealthy();
      const events = await replayedEvents(again);
      assert.deepEqual(
        events.filter((e) => e.type === "ConfigureProgress"),
        progress,
        "a restart configures nothing and publishes none",
      );
    } finally {
      assert.equal(await again.stop(), 0, again.output());
    }
  },
});
