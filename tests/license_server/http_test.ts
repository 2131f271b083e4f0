/** Tests of the license server API in-process: activation with seats, sync, deactivation, errors. */
import assert from "node:assert/strict";
import { verifyLicenseToken } from "../../src/license/verify.ts";
import { LicenseFixture } from "../_helpers/license_fixture.ts";

const T0 = Date.parse("2030-01-01T00:00:00Z");
const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);

async function post(f: LicenseFixture, url: string, action: string, body: unknown) {
  const res = await f.fetch(`${url}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("activate binds devices up to max_devices and signs a copy for each", async () => {
  await using f = await LicenseFixture.start(T0);
  const { url, row } = f.issue({ maxDevices: 2, type: "pro", customer: "ACME" });
  const a = await post(f, url, "activate", { device_id: A });
  assert.equal(a.status, 200);
  assert.equal(a.body.customer_name, "ACME");
  const v = await verifyLicenseToken(a.body.license_jwt, f.trusted);
  assert.ok(v.ok);
  assert.deepEqual(v.claims, {
    id: row.id,
    type: "pro",
    customer: "ACME",
    issuedAt: T0,
    expiresAt: row.expires_at,
    maxDevices: 2,
    graceDays: 7,
    device: A,
    revoked: false,
  });
  assert.equal((await post(f, url, "activate", { device_id: A })).status, 200, "same device again");
  assert.equal((await post(f, url, "activate", { device_id: B })).status, 200);
  const c = await post(f, url, "activate", { device_id: C });
  assert.deepEqual(c, {
    status: 409,
    body: {
      error: "seat_limit",
      message: `license ${row.id} allows 2 device(s) and all are in use; deactivate one of them ` +
        "first",
    },
  });
  assert.deepEqual((await post(f, url, "deactivate", { device_id: B })).body, { released: true });
  assert.deepEqual((await post(f, url, "deactivate", { device_id: B })).body, { released: false });
  assert.equal((await post(f, url, "activate", { device_id: C })).status, 200, "the freed seat");
  const info = await (await f.fetch(url)).json();
  assert.equal(info.activated_devices, 2);
  assert.equal(info.license_id, row.id);
  assert.equal("token" in info, false);
});

Deno.test("sync answers the current copy (renewed, revoked) only to a device holding a seat", async () => {
  await using f = await LicenseFixture.start(T0);
  const { url, row } = f.issue();
  assert.equal((await post(f, url, "sync", { device_id: A })).body.error, "not_activated");
  await post(f, url, "activate", { device_id: A });
  f.db.renew(row.id, T0 + 1e10);
  f.db.revoke(row.id, T0 + 5);
  const s = await post(f, url, "sync", { device_id: A });
  assert.equal(s.status, 200);
  const v = await verifyLicenseToken(s.body.license_jwt, f.trusted);
  assert.ok(
    v.ok && v.claims.revoked && v.claims.expiresAt === Math.floor((T0 + 1e10) / 1000) * 1000,
  );
  const again = await post(f, url, "activate", { device_id: B });
  assert.equal(again.status, 410);
  assert.equal(again.body.error, "revoked");
});

Deno.test("bad requests get a JSON error naming what was expected", async () => {
  await using f = await LicenseFixture.start(T0);
  const { url } = f.issue();
  for (const body of ["{", { device_id: "short" }, { device_id: A.toUpperCase() }, {}]) {
    assert.deepEqual(await post(f, url, "activate", body), {
      status: 400,
      body: {
        error: "bad_request",
        message: 'expected a JSON body {"device_id": "<64 lower-case hex>"}',
      },
    });
  }
  assert.equal((await post(f, url, "explode", { device_id: A })).body.error, "unknown_action");
  assert.deepEqual(
    await post(f, "http://license.test/v1/license/zzz", "activate", { device_id: A }),
    {
      status: 404,
      body: { error: "unknown_license", message: "no license has this delivery URL" },
    },
  );
  const health = await (await f.fetch("http://license.test/health")).json();
  assert.deepEqual(health, { status: "ok", service: "edge-license-server" });
});

Deno.test("an installation's seat moves to its new device id instead of answering seat_limit", async () => {
  await using f = await LicenseFixture.start(T0);
  const { url, row } = f.issue({ maxDevices: 1 });
  const I = "1".repeat(32);
  assert.equal((await post(f, url, "activate", { device_id: A, installation_id: I })).status, 200);
  // The same installation on another machine (or another machine id): the seat moves.
  const moved = await post(f, url, "activate", { device_id: B, installation_id: I });
  assert.equal(moved.status, 200);
  const v = await verifyLicenseToken(moved.body.license_jwt, f.trusted);
  assert.ok(v.ok && v.claims.device === B);
  assert.deepEqual(f.db.seats(row.id).map((s) => [s.device_id, s.installation_id]), [[B, I]]);
  assert.equal((await post(f, url, "sync", { device_id: A })).status, 409, "the old seat is free");
  // Another installation still meets the limit.
  const other = await post(f, url, "activate", { device_id: C, installation_id: "2".repeat(32) });
  assert.equal(other.body.error, "seat_limit");
  // A sync from the installation under yet another device id moves the seat as well.
  const synced = await post(f, url, "sync", { device_id: C, installation_id: I });
  assert.equal(synced.status, 200);
  assert.deepEqual(f.db.seats(row.id).map((s) => s.device_id), [C]);
});

Deno.test("a v1 seat (no installation) moves to the device that names it as previous_device_id", async () => {
  await using f = await LicenseFixture.start(T0);
  const { url, row } = f.issue({ maxDevices: 1 });
  const I = "1".repeat(32);
  assert.equal((await post(f, url, "activate", { device_id: A })).status, 200, "a v1 gateway");
  const synced = await post(f, url, "sync", {
    device_id: B,
    installation_id: I,
    previous_device_id: A,
  });
  assert.equal(synced.status, 200);
  assert.deepEqual(f.db.seats(row.id).map((s) => [s.device_id, s.installation_id]), [[B, I]]);
  // A seat another installation holds is never taken through previous_device_id.
  const stolen = await post(f, url, "activate", {
    device_id: C,
    installation_id: "2".repeat(32),
    previous_device_id: B,
  });
  assert.equal(stolen.body.error, "seat_limit");
  const bad = await post(f, url, "activate", { device_id: C, installation_id: "xyz" });
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /installation_id/);
});
