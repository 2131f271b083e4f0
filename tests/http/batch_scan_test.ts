/** Tests of countBatchMembers(): arrays, nesting, strings with brackets and commas, stopping. */
import assert from "node:assert/strict";
import { countBatchMembers } from "../../src/http/batch_scan.ts";

Deno.test("countBatchMembers() counts top-level members only", () => {
  assert.equal(countBatchMembers("[]", 10), 0);
  assert.equal(countBatchMembers(" [ ] ", 10), 0);
  assert.equal(countBatchMembers('{"a":[1,2]}', 10), 0);
  assert.equal(countBatchMembers("[{}]", 10), 1);
  assert.equal(countBatchMembers('[{"p":[1,2,3]},{"q":{"r":[4,5]}}, 6]', 10), 3);
  assert.equal(countBatchMembers('\n[{"s":"a,b],[c\\",d"}, {}]', 10), 2);
});

Deno.test("countBatchMembers() stops at the given count", () => {
  const huge = `[${"{},".repeat(500_000)}{}]`;
  assert.equal(countBatchMembers(huge, 101), 101);
  assert.equal(countBatchMembers(`[${"{},".repeat(99)}{}]`, 101), 100);
});
