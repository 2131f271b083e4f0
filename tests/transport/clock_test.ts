/** Tests of ClockJumpWatch: wall-clock jumps against the monotonic clock, both ways. */
import assert from "node:assert/strict";
import { CLOCK_JUMP_TOLERANCE_MS, ClockJumpWatch } from "../../src/transport/clock.ts";

Deno.test("ClockJumpWatch sees jumps both ways and nothing while both clocks run together", () => {
  const c = { wall: 1_700_000_000_000, mono: 0 };
  const watch = new ClockJumpWatch(() => c.wall, () => c.mono);
  c.wall += 60_000;
  c.mono += 60_000;
  assert.equal(watch.jumped(), 0);
  c.wall += CLOCK_JUMP_TOLERANCE_MS; // within tolerance: NTP slewing, a late timer
  assert.equal(watch.jumped(), 0);
  c.wall += 800 * 86_400_000;
  c.mono += 10;
  assert.equal(watch.jumped(), 800 * 86_400_000 - 10);
  assert.equal(watch.jumped(), 0, "a jump is reported once");
  c.wall -= 400 * 86_400_000;
  assert.equal(watch.jumped(), -400 * 86_400_000);
});
