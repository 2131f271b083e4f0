/** Tests of protocol.ts: the SecureJoin step parser and the step kinds. */
import assert from "node:assert/strict";
import {
  isGroupStep,
  isSecureJoinRequest,
  parseSecureJoinStep,
  SecureJoinStep,
} from "../src/protocol.ts";

Deno.test("parseSecureJoinStep() reads every known step, trimmed and in any case", () => {
  for (const step of Object.values(SecureJoinStep)) assert.equal(parseSecureJoinStep(step), step);
  assert.equal(parseSecureJoinStep("  VG-Member-Added \r"), "vg-member-added");
});

Deno.test("parseSecureJoinStep() gives undefined for absent, empty and unknown values", () => {
  for (const v of [undefined, "", "  ", "vc-bogus", "vc-request extra"]) {
    assert.equal(parseSecureJoinStep(v), undefined, String(v));
  }
});

Deno.test("only vc-request and vg-request are requests; vg-* steps are group steps", () => {
  assert.equal(isSecureJoinRequest(SecureJoinStep.VC_REQUEST), true);
  assert.equal(isSecureJoinRequest(SecureJoinStep.VG_REQUEST), true);
  assert.equal(isSecureJoinRequest(SecureJoinStep.VC_REQUEST_WITH_AUTH), false);
  assert.equal(isSecureJoinRequest(undefined), false);
  assert.equal(isGroupStep(SecureJoinStep.VG_MEMBER_ADDED), true);
  assert.equal(isGroupStep(SecureJoinStep.VC_REQUEST_PUBKEY), false);
});
