/**
 * Tests of the license at start (docs/contract.md §1.2 step 3): activation from EDGE_LICENSE_URL,
 * skipping when a file exists, starting with no_license when the server is down, and the background
 * retry with back-off (a fake sleep records the waits; no wall-clock waiting).
 */
import assert from "node:assert/strict";
import { retryActivation, startLicense } from "../../src/license/start.ts";
import { setLogSink } from "../../src/log.ts";
import { LicenseFixture } from "../_helpers/license_fixture.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { testConfig } from "../provision/_fakes.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";

const T0 = Date.parse("2030-01-01T00:00:00Z");
const FINGERPRINT = "f".repeat(64);

async function setup() {
  const server = await LicenseFixture.start(T0);
  const dir = await makeTempDir("licstart");
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const map = new Map<string, string>([["installation_id", "1".repeat(32)]]);
  const state = {
    get: (k: string) => map.get(k),
    set: (k: string, v: string) => void map.set(k, v),
  };
  const start = (url?: string) =>
    startLicense(testConfig(dir.path, url ? { EDGE_LICENSE_URL: url } : {}), state, {
      fetch: server.fetch,
      clock: () => T0,
      keys: server.trusted,
      fingerprint: FINGERPRINT,
      machineId: "m".repeat(32),
    });
  return {
    server,
    dir,
    lines,
    start,
    async [Symbol.asyncDispose]() {
      setLogSink(prev);
      await server[Symbol.asyncDispose]();
      await dir.cleanup();
    },
  };
}

Deno.test("startLicense() activates from EDGE_LICENSE_URL and logs id, type, expiry, seats", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue({ type: "trial", maxDevices: 4 });
  const { manager, retryUrl } = await t.start(url);
  assert.equal(retryUrl, undefined);
  assert.equal(manager.status(), "active");
  const line = t.lines.find((l) => l.includes("license activated"))!;
  assert.match(line, new RegExp(`license_id="${row.id}" license_type="trial"`));
  assert.match(line, /expires_at="2030-01-31T00:00:00.000Z" max_devices=4/);

  const again = await t.start(url);
  assert.equal(again.manager.status(), "active");
  assert.equal(t.server.requests.length, 1, "a restart with the file present does not activate");
  assert.ok(
    t.lines.some((l) => l.includes("license file present; skipping activation (status active)")),
  );
});

Deno.test("startLicense() without EDGE_LICENSE_URL starts with no_license", async () => {
  await using t = await setup();
  const { manager } = await t.start();
  assert.equal(manager.status(), "no_license");
  assert.ok(t.lines.some((l) => l.includes("no EDGE_LICENSE_URL; skipping (status no_license)")));
  assert.deepEqual(t.server.requests, []);
});

Deno.test("startLicense() with the server down starts with no_license and asks for a retry", async () => {
  await using t = await setup();
  const { url } = t.server.issue();
  t.server.down = true;
  const { manager, retryUrl } = await t.start(url);
  assert.equal(manager.status(), "no_license");
  assert.equal(retryUrl, url);
  assert.ok(
    t.lines.some((l) =>
      l.includes("WARN") && l.includes("retrying in the background (messaging works meanwhile)")
    ),
  );
});

Deno.test("startLicense() with a refusal starts with no_license and does not retry", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue();
  t.server.db.revoke(row.id, T0);
  const { manager, retryUrl } = await t.start(url);
  assert.equal(manager.status(), "no_license");
  assert.equal(retryUrl, undefined);
  assert.ok(t.lines.some((l) => l.includes("ERROR") && l.includes("(revoked)")));
});

Deno.test("retryActivation() backs off while the server is down and activates once it is up", async () => {
  await using t = await setup();
  const { url } = t.server.issue();
  t.server.down = true;
  const { manager } = await t.start(url);
  const waits: number[] = [];
  const ac = new AbortController();
  await retryActivation(manager, url, ac.signal, {
    initialMs: 1000,
    maxMs: 5000,
    sleep: (ms) => {
      waits.push(ms);
      if (waits.length === 5) t.server.down = false;
      return Promise.resolve();
    },
  });
  assert.deepEqual(waits, [1000, 2000, 4000, 5000, 5000]);
  assert.equal(manager.status(), "active");
  assert.ok(t.lines.some((l) => l.includes("background license activation succeeded")));
});

Deno.test("retryActivation() stops on abort, on a refusal, and once a license is installed", async () => {
  await using t = await setup();
  const { url, row } = t.server.issue();
  t.server.down = true;
  const { manager } = await t.start(url);
  const ac = new AbortController();
  let n = 0;
  await retryActivation(manager, url, ac.signal, {
    sleep: () => (++n === 3 && ac.abort(), Promise.resolve()),
  });
  assert.equal(n, 3);
  const before = t.server.requests.length;

  t.server.down = false;
  t.server.db.revoke(row.id, T0);
  n = 0;
  await retryActivation(manager, url, new AbortController().signal, {
    sleep: () => (n++, Promise.resolve()),
  });
  assert.equal(n, 1, "a definite refusal ends the retries");
  assert.equal(t.server.requests.length, before + 1);

  const other = t.server.issue();
  await manager.activate(other.url);
  n = 0;
  await retryActivation(manager, url, new AbortController().signal, {
    sleep: () => (n++, Promise.resolve()),
  });
  assert.equal(n, 1);
  assert.equal(t.server.requests.length, before + 2, "no request once a license is installed");
});

Deno.test({
  name: "startLicense() on a full disk starts with no_license and retries the activation later",
  ignore: NO_TMPFS,
  async fn() {
    const server = await LicenseFixture.start(T0);
    const prev = setLogSink(() => {});
    try {
      await using fs = await mountTmpfs("licfull", "1m");
      const { url } = server.issue({ type: "trial", maxDevices: 4 });
      fillDisk(`${fs.path}/filler`);
      const state = {
        get: (k: string) => k === "installation_id" ? "1".repeat(32) : undefined,
        set: () => {},
      };
      const { manager, retryUrl } = await startLicense(
        testConfig(fs.path, { EDGE_LICENSE_URL: url }),
        state,
        {
          fetch: server.fetch,
          clock: () => T0,
          keys: server.trusted,
          fingerprint: FINGERPRINT,
          machineId: "m".repeat(32),
        },
      );
      assert.equal(manager.status(), "no_license");
      assert.equal(retryUrl, url, "a full disk passes: the activation is retried");
      assert.deepEqual([...Deno.readDirSync(fs.path)].map((e) => e.name), ["filler"]);
      await Deno.remove(`${fs.path}/filler`);
      await retryActivation(manager, url, new AbortController().signal, {
        sleep: () => Promise.resolve(),
      });
      assert.equal(manager.status(), "active");
    } finally {
      setLogSink(prev);
      await server[Symbol.asyncDispose]();
    }
  },
});
