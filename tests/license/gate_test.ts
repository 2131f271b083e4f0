/** Tests of the license gate: active passes, no_license gives the SPEC §7 error, others name it. */
import assert from "node:assert/strict";
import { RpcCode } from "../../src/constants.ts";
import { GatewayError, LicenseRequiredError } from "../../src/errors.ts";
import { requireLicense } from "../../src/license/gate.ts";
import { FakeLicense } from "../rpc/_fake_services.ts";

Deno.test("requireLicense() lets calls through while the license is active", () => {
  assert.doesNotThrow(() => requireLicense("secure_send_file", new FakeLicense("active")));
});

Deno.test("requireLicense() throws LicenseRequiredError (-32001) with no license", () => {
  assert.throws(() => requireLicense("secure_send_file", new FakeLicense("no_license")), (err) => {
    assert.ok(err instanceof LicenseRequiredError);
    assert.equal(err.code, RpcCode.LICENSE_REQUIRED);
    assert.match(err.message, /License required/);
    assert.match(err.message, /no_license/);
    assert.match(err.message, /license activate <url>/);
    return true;
  });
});

Deno.test("requireLicense() names another status (expired, invalid) with -32001", () => {
  for (const status of ["expired", "invalid"]) {
    assert.throws(
      () => requireLicense("secure_revoke_file_access", new FakeLicense(status)),
      (err) => {
        assert.ok(err instanceof GatewayError && !(err instanceof LicenseRequiredError));
        assert.equal(err.code, -32001);
        assert.equal(
          err.message,
          `License required: "secure_revoke_file_access" needs an active license, but the license ` +
            `status is ${status}. Activate one with: edge-gateway license activate <url>`,
        );
        return true;
      },
    );
  }
});
