/**
 * Tests of LicenseManager against the in-process license server: activation writes a verified
 * privitty.lic, seat limits, sync (renewal, revocation), deactivation, the clock high-water mark
 * and files tampered with on disk — every judgment with an injected clock.
 */
import assert from "node:assert/strict";
import { LicenseClient } from "../../src/license/client.ts";
import { LicenseManager } from "../../src/license/manager.ts";
import { setLogSink } from "../../src/log.ts";
import { ConfigKey } from "../../src/store/mod.ts";
import { LicenseFixture } from "../_helpers/license_fixture.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const DAY = 86_400_000;
const T0 = Date.parse("2030-01-01T00:00:00Z");
const DEVICE_A = "a".repeat(64);
const DEVICE_B = "b".repeat(64);

/** A key/value state like the account database's config table. */
function memoryState() {
  const map = new Map<string, string>();
  return { map, get: (k: string) => map.get(k), set: (k: string, v: string) => void map.set(k, v) };
}

async function setup(device = DEVICE_A, dataDir?: string) {
  const server = await LicenseFixture.start(T0);
  const dir = await makeTempDir("lic");
  const clock = { now: T0 };
  const mono = { now: 0 };
  const state = memoryState();
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const open = (deviceId = device) =>
    LicenseManager.open({
      dataDir: dataDir ?? dir.path,
      deviceId,
      keys: server.trusted,
      state,
      clock: () => clock.now,
      monotonic: () => mono.now,
      client: new LicenseClient({ fetch: server.fetch }),
    });
  return {
    server,
    dir,
    clock,
    state,
    lines,
    open,
    /** Time goes by: the wall and the monotonic clock both move `ms` forward. */
    pass(ms: number) {
      clock.now += ms;
      mono.now += ms;
    },
    async [Symbol.asyncDispose]() {
      setLogSink(prev);
      await server[Symbol.asyncDispose]();
      await dir.cleanup();
    },
  };
}

Deno.test("activate() binds the device, writes privitty.lic and is active at once", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue({ type: "pro", maxDevices: 3, days: 30 });
  const m = await t.open();
  assert.equal(m.status(), "no_license");
  const described = await m.activate(url);
  assert.deepEqual(described, {
    status: "active",
    reason: `license ${row.id} is valid until 2030-01-31T00:00:00.000Z`,
    license_id: row.id,
    license_type: "pro",
    customer: "Test customer",
    issued_at: "2030-01-01T00:00:00.000Z",
    expires_at: "2030-01-31T00:00:00.000Z",
    max_devices: 3,
    grace_days: 7,
    device_id: DEVICE_A,
  });
  assert.ok(m.isActive());
  assert.deepEqual(t.server.requests, [`POST /v1/license/${row.token}/activate`]);
  const file = JSON.parse(await Deno.readTextFile(`${t.dir.path}/privitty.lic`));
  assert.deepEqual(Object.keys(file), ["license_jwt", "customer_name", "url"]);
  assert.equal(file.url, url);
  assert.equal((await Deno.stat(`${t.dir.path}/privitty.lic`)).mode! & 0o777, 0o600);
  const logged = t.lines.find((l) => l.includes("license activated"));
  assert.ok(logged);
  for (const field of [row.id, "pro", "2030-01-31T00:00:00.000Z", "max_devices=3"]) {
    assert.ok(logged.includes(field), `activation log names ${field}: ${logged}`);
  }
  assert.ok(!logged.includes(row.token), "the delivery token is not logged");
  const reopened = await t.open();
  assert.equal(reopened.status(), "active", "a restart reads the same file");
});

Deno.test("activate() refuses the device after max_devices and installs nothing", async () => {
  await using t = await setup();
  const { url } = t.server.issue({ maxDevices: 1 });
  await (await t.open(DEVICE_B)).activate(url);
  await Deno.remove(`${t.dir.path}/privitty.lic`);
  const m = await t.open(DEVICE_A);
  await assert.rejects(
    m.activate(url),
    (err: Error) => {
      assert.match(
        err.message,
        /^the license server at http:\/\/license\.test\/v1\/license\/toke… refused to activate: license LIC-T1 allows 1 device\(s\) and all are in use; deactivate one of them first \(seat_limit\)$/,
      );
      return true;
    },
  );
  assert.equal(m.status(), "no_license");
  await assert.rejects(Deno.stat(`${t.dir.path}/privitty.lic`), Deno.errors.NotFound);
  const again = await t.open(DEVICE_B);
  await again.activate(url); // the device holding the seat may activate again (no new seat)
  assert.equal(t.server.db.seats("LIC-T1").length, 1);
});

Deno.test("activate() names an unknown or revoked license and an unreachable server", async () => {
  await using t = await setup();
  const m = await t.open();
  await assert.rejects(
    m.activate("http://license.test/v1/license/nope-nope"),
    /refused to activate: no license has this delivery URL \(unknown_license\)/,
  );
  const { url, row } = t.server.issue();
  t.server.db.revoke(row.id, T0);
  await assert.rejects(m.activate(url), /was revoked at 2030-01-01T00:00:00.000Z \(revoked\)/);
  t.server.down = true;
  await assert.rejects(m.activate(url), /is unreachable: error sending request/);
  await assert.rejects(m.activate("ftp://x/y"), /"ftp:\/\/x\/y" is not a license delivery URL/);
  assert.equal(m.status(), "no_license");
});

Deno.test("sync() brings a renewal (grace reset) and a revocation in without a restart", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue({ days: 10, graceDays: 5 });
  const m = await t.open();
  await m.activate(url);
  t.clock.now = T0 + 12 * DAY;
  t.server.clock.now = t.clock.now;
  assert.equal(m.status(), "grace_period");
  assert.ok(m.isActive(), "gated calls still run in the grace period");
  t.server.db.renew(row.id, T0 + 60 * DAY);
  const synced = await m.sync();
  assert.equal(synced.status, "active");
  assert.equal(synced.expires_at, "2030-03-02T00:00:00.000Z");
  t.server.db.revoke(row.id, t.clock.now);
  const revoked = await m.sync();
  assert.equal(revoked.status, "invalid");
  assert.equal(revoked.reason, `license ${row.id} was revoked by its issuer`);
  assert.equal(m.isActive(), false);
});

Deno.test("sync() and deactivate() need an installed license with a delivery URL", async () => {
  await using t = await setup();
  const m = await t.open();
  for (const op of [() => m.sync(), () => m.deactivate()]) {
    await assert.rejects(op(), /no license is installed \(status no_license\); activate one with/);
  }
  const { url } = t.server.issue();
  await m.activate(url);
  const file = JSON.parse(await Deno.readTextFile(`${t.dir.path}/privitty.lic`));
  await Deno.writeTextFile(`${t.dir.path}/privitty.lic`, file.license_jwt); // a bare token
  await m.reload();
  assert.equal(m.status(), "active", "a bare signed token is a license file too");
  await assert.rejects(m.sync(), /the license file names no delivery URL/);
});

Deno.test("deactivate() frees the seat; the kept file no longer counts; activation again does", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue({ maxDevices: 1 });
  const m = await t.open();
  await m.activate(url);
  assert.equal(t.server.db.seats(row.id).length, 1);
  await m.deactivate();
  assert.equal(t.server.db.seats(row.id).length, 0, "the seat is free");
  assert.ok((await Deno.stat(`${t.dir.path}/privitty.lic`)).isFile, "the file is kept");
  const d = m.describe();
  assert.equal(d.status, "no_license");
  assert.match(String(d.reason), /was deactivated on this device; the file is kept/);
  assert.equal(d.license_id, row.id, "the kept file can still be inspected");
  assert.equal((await t.open()).status(), "no_license", "also after a restart");
  await assert.rejects(m.sync(), /holds no seat of license .* \(not_activated\)/);
  // In the same second: the server signs the very same token again, and it counts.
  assert.equal((await m.activate(url)).status, "active");
  assert.equal(t.server.db.seats(row.id).length, 1);
});

Deno.test("the clock high-water mark catches a clock set back, which heals by itself", async () => {
  await using t = await setup();
  const { url } = t.server.issue({ days: 365 });
  const m = await t.open();
  await m.activate(url);
  t.pass(20 * DAY);
  assert.equal(m.status(), "active");
  const mark = () => JSON.parse(t.state.map.get(ConfigKey.LICENSE_CLOCK_HIGH_WATER)!).ms;
  assert.equal(mark(), T0 + 20 * DAY);
  t.clock.now -= 2 * DAY; // set back two days below the time lived through
  const v = m.verdict();
  assert.equal(v.status, "clock_tampered");
  assert.match(v.reason, /earlier than a time this gateway already saw \(2030-01-21/);
  assert.equal(mark(), T0 + 20 * DAY, "never lowered");
  const restarted = await t.open();
  assert.equal(restarted.status(), "clock_tampered", "the mark survives a restart");
  t.pass(DAY);
  assert.equal(m.status(), "clock_tampered", "still behind the mark a day later");
  t.pass(DAY);
  assert.equal(m.status(), "active", "the clock passed the mark: active again, no sync");
  const changes = t.lines.filter((l) => l.includes("license status changed"));
  assert.equal(changes.length, 2, "one line per change, none per call");
  assert.match(changes[0], /from active to clock_tampered/);
  assert.match(changes[1], /from clock_tampered to active reason="license .* is valid until/);
  assert.equal(restarted.status(), "active");
  t.clock.now = T0 + 30 * DAY;
  assert.equal(m.status(), "active", "a corrected clock is fine at once");
  assert.equal(t.server.requests.length, 1, "only the activation: no sync");
});

Deno.test("a clock that ran 800 days ahead is active again once corrected, without a sync", async () => {
  await using t = await setup();
  const { url } = t.server.issue({ days: 365 });
  const m = await t.open();
  await m.activate(url);
  t.pass(DAY);
  t.clock.now += 800 * DAY; // the clock jumps ahead
  assert.equal(m.status(), "expired", "judged by the clock it has");
  t.pass(3_600_000);
  assert.equal(m.status(), "expired");
  assert.equal((await t.open()).status(), "expired", "a restart while ahead");
  t.clock.now -= 800 * DAY; // corrected
  assert.equal(m.status(), "active");
  assert.equal((await t.open()).status(), "active", "also after a restart");
  assert.equal(t.server.requests.length, 1, "only the activation: no sync");
});

Deno.test("setting the clock back cannot revive a license the running time carried past expiry", async () => {
  await using t = await setup();
  const { url } = t.server.issue({ days: 10, graceDays: 0 });
  const m = await t.open();
  await m.activate(url);
  t.pass(11 * DAY);
  assert.equal(m.status(), "expired");
  const restarted = await t.open();
  t.clock.now = T0 + 5 * DAY;
  assert.equal(m.status(), "clock_tampered");
  assert.equal(restarted.status(), "clock_tampered", "also after a restart");
  t.pass(6 * DAY);
  assert.equal(m.status(), "expired", "once the clock passed the mark: expired, as it is");
});

Deno.test("a mark an earlier build stored far ahead is capped at load to a day past the issue time", async () => {
  await using t = await setup();
  const { url } = t.server.issue({ days: 365 });
  await (await t.open()).activate(url);
  // Earlier builds stored any clock reading as a bare number, also one 800 days ahead.
  t.state.map.set(ConfigKey.LICENSE_CLOCK_HIGH_WATER, String(T0 + 800 * DAY));
  t.clock.now = T0 + 3 * DAY;
  assert.equal((await t.open()).status(), "active", "the clock is past the cap: healed at once");

  t.state.map.set(ConfigKey.LICENSE_CLOCK_HIGH_WATER, String(T0 + 800 * DAY));
  t.clock.now = T0 + 3_600_000;
  const m = await t.open();
  const v = m.verdict();
  assert.equal(v.status, "clock_tampered", "up to a day past the issue time still counts");
  assert.match(v.reason, /already saw \(2030-01-02T00:00:00.000Z\)/);
  t.pass(DAY);
  assert.equal(m.status(), "active", "heals by itself once the clock is past it");
});

Deno.test("activation and sync set the mark to the issuer's signed time", async () => {
  await using t = await setup();
  const { url } = t.server.issue({ days: 365 });
  const m = await t.open();
  await m.activate(url);
  const mark = () => JSON.parse(t.state.map.get(ConfigKey.LICENSE_CLOCK_HIGH_WATER)!).ms;
  assert.equal(mark(), T0, "activation sets the first mark");
  t.pass(20 * DAY);
  m.status();
  t.clock.now = T0 + 10 * DAY; // behind the time lived through, but the issuer agrees
  assert.equal(m.status(), "clock_tampered");
  t.server.clock.now = T0 + 10 * DAY;
  assert.equal((await m.sync()).status, "active", "the issuer's time wins");
  assert.equal(mark(), T0 + 10 * DAY);
  assert.equal((await t.open()).status(), "active", "also after a restart");
});

Deno.test("a license file tampered with, foreign, unreadable or of an earlier build is not honoured", async () => {
  await using t = await setup();
  const { url } = t.server.issue();
  const m = await t.open();
  await m.activate(url);
  const path = `${t.dir.path}/privitty.lic`;
  const file = JSON.parse(await Deno.readTextFile(path));
  const [h, p, s] = file.license_jwt.split(".");
  const claims = JSON.parse(atob(p.replace(/-/g, "+").replace(/_/g, "/")));
  const enc = (o: unknown) =>
    btoa(JSON.stringify(o)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  await Deno.writeTextFile(
    path,
    JSON.stringify({ ...file, license_jwt: `${h}.${enc({ ...claims, exp: 4e9 })}.${s}` }),
  );
  await m.reload();
  assert.equal(m.status(), "invalid");
  assert.match(m.reason(), /^the license signature does not verify/);

  await Deno.writeTextFile(path, JSON.stringify(file));
  assert.equal((await t.open(DEVICE_B)).verdict().reason.includes("bound to another device"), true);
  assert.equal((await t.open(DEVICE_B)).status(), "invalid");

  await Deno.writeTextFile(path, "{not json");
  await m.reload();
  assert.deepEqual(m.verdict(), {
    status: "invalid",
    reason: "the license file is neither JSON nor a signed token",
  });
  await Deno.remove(path);
  await Deno.mkdir(path);
  await m.reload();
  assert.equal(m.status(), "invalid");
  assert.match(m.reason(), /^the license file cannot be read/);
  await Deno.remove(path);

  await Deno.writeTextFile(`${t.dir.path}/license.json`, '{"expires_at":"2099-01-01"}');
  const legacy = await t.open();
  assert.equal(legacy.status(), "no_license", "an unsigned license.json is never honoured");
  assert.ok(t.lines.some((l) => l.includes("license.json (an unsigned license of an earlier")));
});

Deno.test("a license bound under the v1 id stays active and the next sync re-binds it to v2", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue({ maxDevices: 1 });
  const v1 = await t.open(DEVICE_A);
  await v1.activate(url); // what an earlier build did, under its v1 id
  const I = "1".repeat(32);
  const m = await LicenseManager.open({
    dataDir: t.dir.path,
    deviceId: DEVICE_B,
    legacyDeviceId: DEVICE_A,
    installationId: I,
    keys: t.server.trusted,
    state: t.state,
    clock: () => t.clock.now,
    client: new LicenseClient({ fetch: t.server.fetch }),
  });
  const before = m.describe();
  assert.equal(before.status, "active");
  assert.equal(before.reason_code, "legacy_binding");
  const after = await m.sync();
  assert.equal(after.status, "active");
  assert.equal(after.reason_code, undefined);
  assert.equal(m.claims()!.device, DEVICE_B);
  assert.deepEqual(
    t.server.db.seats(row.id).map((s) => [s.device_id, s.installation_id]),
    [[DEVICE_B, I]],
    "the seat moved; no second seat was taken",
  );
});

Deno.test("a moved installation is invalid with installation_moved until activate re-binds it", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue({ maxDevices: 1 });
  const I = "1".repeat(32);
  const open = (deviceId: string) =>
    LicenseManager.open({
      dataDir: t.dir.path,
      deviceId,
      installationId: I,
      keys: t.server.trusted,
      state: t.state,
      clock: () => t.clock.now,
      client: new LicenseClient({ fetch: t.server.fetch }),
    });
  await (await open(DEVICE_A)).activate(url);
  // The start on the other host recorded the move (provision/installation.ts).
  t.state.set(
    ConfigKey.INSTALLATION_MOVED,
    JSON.stringify({ from: "a".repeat(32), to: "b".repeat(32), at: T0 }),
  );
  const moved = await open(DEVICE_B);
  const d = moved.describe();
  assert.equal(d.status, "invalid");
  assert.equal(d.reason_code, "installation_moved");
  const again = await moved.activate(url);
  assert.equal(again.status, "active");
  assert.equal(again.reason_code, undefined);
  assert.equal(moved.moved(), undefined, "the move is settled");
  assert.deepEqual(t.server.db.seats(row.id).map((s) => s.device_id), [DEVICE_B]);
});
