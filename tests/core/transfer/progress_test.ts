/** Progress events: at most every 250 ms and 1 %, always the last (bytes = total). */
import assert from "node:assert/strict";
import { ProgressThrottle } from "../../../src/core/transfer/progress.ts";

Deno.test("progress is let through every 250 ms and 1 %, and at the end", () => {
  let now = 0;
  const t = new ProgressThrottle(() => now);
  assert.equal(t.due("x", 1, 1000), true, "the first report");
  assert.equal(t.due("x", 500, 1000), false, "too soon");
  now = 300;
  assert.equal(t.due("x", 500, 1000), true);
  now = 600;
  assert.equal(t.due("x", 505, 1000), false, "less than 1 %");
  assert.equal(t.due("x", 1000, 1000), true, "the end, however soon");
  assert.equal(t.due("x", 1000, 1000), false, "never twice");
  t.forget("x");
  assert.equal(t.due("x", 1, 1000), true);
});
