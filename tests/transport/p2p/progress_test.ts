/** Progress reports: at most every 250 ms and 1 % of the file, and always the end. */
import assert from "node:assert/strict";
import { progressThrottle } from "../../../src/transport/p2p/progress.ts";

Deno.test("reports wait for both 250 ms and 1 % more, and the end is always reported", () => {
  let t = 0;
  const seen: number[] = [];
  const report = progressThrottle(
    { transferId: "x", direction: "in", total: 10_000 },
    (p) => seen.push(p.bytes),
    () => t,
  );
  report(50); // under 1 %: no
  report(150); // the first 1 %: reported
  t = 100;
  report(500); // 5 % more but only 100 ms later: no
  t = 300;
  report(520); // 250 ms passed and 3.7 % more since the last report: yes
  t = 900;
  report(560); // time passed, 0.4 % more: no
  t = 901;
  report(10_000); // the end: yes, whatever the time
  report(10_000); // not twice
  assert.deepEqual(seen, [150, 520, 10_000]);
});
