/** Tests of judgeLicense(): every status and its reason, with an injected clock. */
import assert from "node:assert/strict";
import { CLOCK_TOLERANCE_MS, judgeLicense, permitsGatedCalls } from "../../src/license/status.ts";
import type { LicenseFacts } from "../../src/license/status.ts";
import { claims, DEVICE, T0 } from "./_tokens.ts";

const DAY = 86_400_000;

function judge(over: Partial<LicenseFacts> = {}, c = claims()) {
  return judgeLicense({
    file: { kind: "verified", claims: c },
    deviceId: DEVICE,
    now: T0 + DAY,
    ...over,
  });
}

Deno.test("judgeLicense(): no file is no_license; an unusable file is invalid with its reason", () => {
  assert.deepEqual(judge({ file: { kind: "absent" } }), {
    status: "no_license",
    reason: "no license is installed",
  });
  assert.deepEqual(judge({ file: { kind: "unusable", reason: "the license is not JSON" } }), {
    status: "invalid",
    reason: "the license is not JSON",
  });
});

Deno.test("judgeLicense(): active until expiry, grace_period for grace_days, then expired", () => {
  const exp = claims().expiresAt;
  assert.deepEqual(judge({ now: exp - 1 }), {
    status: "active",
    reason: "license LIC-1 is valid until 2030-01-31T00:00:00.000Z",
  });
  const grace = judge({ now: exp });
  assert.equal(grace.status, "grace_period");
  assert.equal(
    grace.reason,
    "license LIC-1 expired at 2030-01-31T00:00:00.000Z; its grace period ends at " +
      "2030-02-07T00:00:00.000Z: renew it, then run license sync",
  );
  assert.equal(judge({ now: exp + 7 * DAY - 1 }).status, "grace_period");
  assert.deepEqual(judge({ now: exp + 7 * DAY }), {
    status: "expired",
    reason: "license LIC-1 expired at 2030-01-31T00:00:00.000Z and its grace period ended at " +
      "2030-02-07T00:00:00.000Z",
  });
  const noGrace = judge({ now: exp }, claims({ graceDays: 0 }));
  assert.deepEqual(noGrace, {
    status: "expired",
    reason: "license LIC-1 expired at 2030-01-31T00:00:00.000Z",
  });
});

Deno.test("judgeLicense(): a clock behind the issue time or the high-water mark is clock_tampered", () => {
  const early = judge({ now: T0 - CLOCK_TOLERANCE_MS - 1 });
  assert.equal(early.status, "clock_tampered");
  assert.match(early.reason, /earlier than the license's issue time \(2030-01-01T00:00:00.000Z\)/);
  assert.equal(judge({ now: T0 - CLOCK_TOLERANCE_MS }).status, "active", "within tolerance");

  const seen = T0 + 10 * DAY;
  const back = judge({ now: T0 + 2 * DAY, highWater: seen });
  assert.equal(back.status, "clock_tampered");
  assert.equal(
    back.reason,
    "the system clock (2030-01-03T00:00:00.000Z) is earlier than a time this gateway already " +
      "saw (2030-01-11T00:00:00.000Z); the clock was set back: correct it",
  );
  assert.equal(judge({ now: seen - CLOCK_TOLERANCE_MS, highWater: seen }).status, "active");
  const expiredAndBack = judge({ now: T0 + 40 * DAY, highWater: T0 + 50 * DAY });
  assert.equal(expiredAndBack.status, "clock_tampered", "rolling back cannot revive a license");
});

Deno.test("judgeLicense(): another device, a revocation or a deactivation outrank the dates", () => {
  const foreign = judge({ deviceId: "b".repeat(64) });
  assert.equal(foreign.status, "invalid");
  assert.equal(
    foreign.reason,
    "license LIC-1 is bound to another device (aaaaaaaaaaaa…), not this one (bbbbbbbbbbbb…)",
  );
  assert.deepEqual(judge({}, claims({ revoked: true })), {
    status: "invalid",
    reason: "license LIC-1 was revoked by its issuer",
  });
  const off = judge({ deactivatedIssuedAt: T0 });
  assert.equal(off.status, "no_license");
  assert.match(off.reason, /license LIC-1 was deactivated on this device; the file is kept/);
  assert.equal(
    judge({ deactivatedIssuedAt: T0 - 1 }).status,
    "active",
    "a copy issued after the deactivation (a new activation) counts",
  );
});

Deno.test("permitsGatedCalls() admits active and grace_period only", () => {
  const admitted = ["no_license", "active", "grace_period", "expired", "clock_tampered", "invalid"]
    .filter(permitsGatedCalls);
  assert.deepEqual(admitted, ["active", "grace_period"]);
});

Deno.test("judgeLicense(): a v1 binding of this device still counts, named legacy_binding", () => {
  const v = judge({ deviceId: "b".repeat(64), legacyDeviceId: DEVICE });
  assert.equal(v.status, "active");
  assert.equal(v.code, "legacy_binding");
  assert.match(
    v.reason,
    /bound under this device's v1 id .* next license sync or activate re-binds/,
  );
  const other = judge({ deviceId: "b".repeat(64), legacyDeviceId: "c".repeat(64) });
  assert.equal(other.status, "invalid", "another device's v1 id is another device");
  assert.equal(other.code, undefined);
});

Deno.test("judgeLicense(): an installation that moved says so, with reason_code installation_moved", () => {
  const moved = { from: "1".repeat(32), to: "2".repeat(32), at: T0 };
  const v = judge({ deviceId: "b".repeat(64), moved });
  assert.equal(v.status, "invalid");
  assert.equal(v.code, "installation_moved");
  assert.match(
    v.reason,
    /^this installation moved to another machine \(machine id 11111111… → 22222222…/,
  );
  assert.match(v.reason, /run license activate <url> to re-bind it/);
  assert.equal(
    judge({ moved }).status,
    "active",
    "bound to this device since: the move is settled",
  );
});
