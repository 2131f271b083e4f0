/** Tests of the license gate: active and grace pass; other statuses give -32001 with the fix. */
import assert from "node:assert/strict";
import { RpcCode } from "../../src/constants.ts";
import { GatewayError, LicenseRequiredError } from "../../src/errors.ts";
import { requireLicense } from "../../src/license/gate.ts";
import type { LicenseSource } from "../../src/license/manager.ts";
import { FakeLicense } from "../_helpers/fake_license.ts";

function source(status: string, reason = ""): LicenseSource {
  return new FakeLicense(status, reason);
}

Deno.test("requireLicense() lets calls through while active or in the grace period", () => {
  assert.doesNotThrow(() => requireLicense("secure_send_file", source("active")));
  assert.doesNotThrow(() => requireLicense("secure_send_file", source("grace_period")));
});

Deno.test("requireLicense() throws LicenseRequiredError (-32001) with no license", () => {
  assert.throws(() => requireLicense("secure_send_file", source("no_license")), (err) => {
    assert.ok(err instanceof LicenseRequiredError);
    assert.equal(err.code, RpcCode.LICENSE_REQUIRED);
    assert.equal(
      err.message,
      'License required: "secure_send_file" needs an active license, but the license status is ' +
        "no_license. Activate one with: edge-gateway license activate <url>",
    );
    return true;
  });
});

Deno.test("requireLicense() names the status, its reason and the command that fixes it", () => {
  const cases: [string, string, string][] = [
    [
      "expired",
      "license L expired at 2030-01-31T00:00:00.000Z",
      "Renew it with its issuer, then run: edge-gateway license sync (or activate another with: " +
      "edge-gateway license activate <url>)",
    ],
    [
      "clock_tampered",
      "the system clock is behind",
      "Correct the system clock, then retry (edge-gateway license status shows the status)",
    ],
    [
      "invalid",
      "license L is bound to another device",
      "Activate a valid license for this device with: edge-gateway license activate <url>",
    ],
  ];
  for (const [status, reason, fix] of cases) {
    assert.throws(
      () => requireLicense("secure_revoke_file_access", source(status, reason)),
      (err) => {
        assert.ok(err instanceof GatewayError && !(err instanceof LicenseRequiredError));
        assert.equal(err.code, -32001);
        assert.equal(
          err.message,
          `License required: "secure_revoke_file_access" needs an active license, but the ` +
            `license status is ${status} (${reason}). ${fix}`,
        );
        return true;
      },
    );
  }
  assert.throws(
    () => requireLicense("secure_send_file", source("expired")),
    /license status is expired\. Renew it/,
    "without a reason the text still reads",
  );
});
