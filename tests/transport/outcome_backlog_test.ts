/** OutcomeBacklog: an outcome that cannot be written waits, in order, until a retry writes it. */
import assert from "node:assert/strict";
import { OutcomeBacklog } from "../../src/transport/outcome_backlog.ts";

Deno.test("an unwritten outcome waits and is written by a later retry, oldest first", () => {
  const backlog = new OutcomeBacklog();
  let full = true;
  const written: number[] = [];
  const write = (id: number) => () => {
    if (full) throw new Error("database or disk is full");
    written.push(id);
  };
  const failures: unknown[] = [];
  assert.equal(backlog.record(1, write(1), (e) => failures.push(e)), false);
  assert.equal(backlog.record(2, write(2), (e) => failures.push(e)), false);
  assert.equal(failures.length, 2);
  assert.ok(backlog.has(1) && backlog.has(2));
  backlog.retry();
  assert.equal(backlog.size, 2, "still full: both wait");
  full = false;
  backlog.retry();
  assert.deepEqual(written, [1, 2]);
  assert.equal(backlog.size, 0);
  assert.equal(backlog.record(3, write(3), () => assert.fail("written at once")), true);
});
