/** Tests of the stop signals (any number of them, one shutdown) and the shutdown deadline. */
import assert from "node:assert/strict";
import { setLogSink } from "../src/log.ts";
import { finishShutdown, type SignalApi, StopSignals } from "../src/shutdown.ts";

function fakeSignals() {
  const handlers = new Map<Deno.Signal, Set<() => void>>();
  const api: SignalApi = {
    add: (s, h) => void (handlers.get(s) ?? handlers.set(s, new Set()).get(s)!).add(h),
    remove: (s, h) => void handlers.get(s)?.delete(h),
  };
  const send = (s: Deno.Signal) => handlers.get(s)?.forEach((h) => h());
  const listening = () => [...handlers.values()].reduce((n, set) => n + set.size, 0);
  return { api, send, listening };
}

Deno.test("StopSignals resolves on the first signal and keeps listening until closed", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    const fake = fakeSignals();
    const signals = new StopSignals(fake.api);
    assert.equal(fake.listening(), 2);
    fake.send("SIGTERM");
    fake.send("SIGTERM"); // a process-group stop: once from the shell, once forwarded
    fake.send("SIGINT");
    assert.equal(await signals.first, "SIGTERM");
    assert.equal(signals.received, 3);
    // Still listening: a later signal must not fall through to the default (kill) action.
    assert.equal(fake.listening(), 2);
    signals.close();
    assert.equal(fake.listening(), 0);
    assert.equal(lines.filter((l) => /received SIGTERM; shutting down/.test(l)).length, 1);
    assert.equal(lines.filter((l) => /received (SIGTERM|SIGINT) again/.test(l)).length, 2);
  } finally {
    setLogSink(prev);
  }
});

Deno.test("finishShutdown() answers finished, or the steps still running at the deadline", async () => {
  const never = Promise.resolve();
  assert.deepEqual(await finishShutdown(Promise.resolve(), new Promise(() => {}), () => []), {
    finished: true,
  });
  const stuck = new Promise<void>(() => {});
  assert.deepEqual(await finishShutdown(stuck, never, () => ["HTTP server", "store"]), {
    finished: false,
    running: ["HTTP server", "store"],
  });
  const prev = setLogSink(() => {});
  try {
    const failed = Promise.reject(new Error("imap logout failed"));
    assert.deepEqual(await finishShutdown(failed, new Promise(() => {}), () => []), {
      finished: true,
    });
  } finally {
    setLogSink(prev);
  }
});
