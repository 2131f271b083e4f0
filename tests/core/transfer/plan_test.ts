/** The one send-side decision: one mail, or relay parts when it cannot fit and all can take them. */
import assert from "node:assert/strict";
import { planFileDelivery } from "../../../src/core/transfer/plan.ts";
import { fitsOneMail, PART_RATIO, partPayloadBytes } from "../../../src/core/transfer/limit.ts";

const LIMIT = 256 * 1024;

Deno.test("files that fit, unknown limits and peers without the capability stay one mail", () => {
  assert.deepEqual(planFileDelivery(100_000, LIMIT, [true]), { kind: "one-mail" });
  assert.deepEqual(planFileDelivery(10_000_000, undefined, [true]), { kind: "one-mail" });
  assert.deepEqual(planFileDelivery(10_000_000, LIMIT, [true, false]), { kind: "one-mail" });
  assert.deepEqual(planFileDelivery(10_000_000, LIMIT, []), { kind: "one-mail" });
});

Deno.test("a file above the limit to capable peers goes in parts that each fit one mail", () => {
  const plan = planFileDelivery(3 * 1024 * 1024, LIMIT, [true, true]);
  assert.equal(plan.kind, "parts");
  if (plan.kind !== "parts") return;
  assert.equal(plan.partSize, partPayloadBytes(LIMIT));
  assert.equal(plan.parts, Math.ceil(3 * 1024 * 1024 / plan.partSize));
  assert.ok(plan.partSize * PART_RATIO < LIMIT);
  assert.equal(fitsOneMail(plan.partSize, LIMIT), false, "a part holds more than a file would");
});
