/** The send-file progress line. */
import assert from "node:assert/strict";
import { progressLine } from "../../src/cli/transfer_progress.ts";

Deno.test("the progress line shows a bar, the percentage and megabytes", () => {
  assert.equal(progressLine(0, 2_000_000, 10), "[..........]   0 %  0.0 / 2.0 MB");
  assert.equal(progressLine(1_000_000, 2_000_000, 10), "[#####.....]  50 %  1.0 / 2.0 MB");
  assert.equal(progressLine(2_000_000, 2_000_000, 10), "[##########] 100 %  2.0 / 2.0 MB");
});
