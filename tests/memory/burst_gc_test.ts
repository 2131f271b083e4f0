/** Tests of BurstGc: one collection per burst past the threshold, when it ends; none without gc. */
import assert from "node:assert/strict";
import { BurstGc, exposedFullGc, type StartTimer } from "../../src/memory/burst_gc.ts";

/** Timers that run only when the test fires them. */
function manualTimers() {
  const pending: { run: () => void; ms: number; cancelled: boolean }[] = [];
  const startTimer: StartTimer = (run, ms) => {
    const timer = { run, ms, cancelled: false };
    pending.push(timer);
    return () => timer.cancelled = true;
  };
  /** Fires the oldest live timer; false when none is left. */
  const fire = (): boolean => {
    for (let timer = pending.shift(); timer !== undefined; timer = pending.shift()) {
      if (timer.cancelled) continue;
      timer.run();
      return true;
    }
    return false;
  };
  const live = () => pending.filter((t) => !t.cancelled);
  return { startTimer, fire, live };
}

const MiB = 1_048_576;

Deno.test("BurstGc collects once a burst is over, however many bodies it held", () => {
  const timers = manualTimers();
  let collections = 0;
  const burst = new BurstGc({
    thresholdBytes: 4 * MiB,
    quietMs: 1_000,
    gc: () => collections++,
    ...timers,
  });
  for (let i = 0; i < 32; i++) burst.note(MiB);
  assert.equal(timers.live().length, 1, "one timer for the whole burst");
  assert.equal(timers.live()[0].ms, 1_000);
  assert.ok(timers.fire()); // bodies came after the timer started: the burst may go on
  assert.equal(collections, 0);
  assert.ok(burst.pending);
  assert.ok(timers.fire()); // a quiet period without bodies: the burst is over
  assert.equal(collections, 1);
  assert.equal(burst.runs, 1);
  assert.ok(!burst.pending);
  assert.ok(!timers.fire(), "nothing more is scheduled while idle");
});

Deno.test("BurstGc waits while work keeps coming, then collects once", () => {
  const timers = manualTimers();
  let collections = 0;
  const burst = new BurstGc({
    thresholdBytes: MiB,
    quietMs: 500,
    gc: () => collections++,
    ...timers,
  });
  burst.note(MiB);
  for (let period = 0; period < 5; period++) {
    burst.note(16 * 1024); // a trickle keeps the burst going
    assert.ok(timers.fire());
    assert.equal(collections, 0, `period ${period}`);
  }
  assert.ok(timers.fire());
  assert.equal(collections, 1);
  burst.note(MiB); // a later burst gets its own collection
  assert.ok(timers.fire());
  assert.equal(collections, 2);
});

Deno.test("BurstGc schedules nothing until the garbage noted since the last collection reaches the threshold", () => {
  const timers = manualTimers();
  let collections = 0;
  const burst = new BurstGc({
    thresholdBytes: MiB,
    quietMs: 1_000,
    gc: () => collections++,
    ...timers,
  });
  for (let i = 0; i < 63; i++) burst.note(16 * 1024);
  assert.ok(!burst.pending, "63 × 16 KiB is under 1 MiB");
  burst.note(16 * 1024);
  assert.ok(burst.pending);
  assert.ok(timers.fire());
  assert.equal(collections, 1);
  burst.note(MiB - 1); // counting starts again after a collection
  assert.ok(!burst.pending);
});

Deno.test("BurstGc schedules nothing without a collection to run, and cancel() drops one", () => {
  const timers = manualTimers();
  const none = new BurstGc({ thresholdBytes: 1, quietMs: 1_000, gc: undefined, ...timers });
  none.note(MiB);
  assert.equal(timers.live().length, 0);
  assert.ok(!none.pending);

  let collections = 0;
  const burst = new BurstGc({
    thresholdBytes: 1,
    quietMs: 1_000,
    gc: () => collections++,
    ...timers,
  });
  burst.note(MiB);
  burst.cancel();
  assert.ok(!burst.pending);
  assert.ok(!timers.fire());
  assert.equal(collections, 0);
});

Deno.test("exposedFullGc() is there exactly when the runtime exposes gc", () => {
  const exposed = typeof (globalThis as { gc?: unknown }).gc === "function";
  assert.equal(exposedFullGc() !== undefined, exposed);
});
