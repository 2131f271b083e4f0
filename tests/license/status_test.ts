/** Tests of FileLicenseSource: absent, active, expired and malformed license files. */
import assert from "node:assert/strict";
import { setLogSink } from "../../src/log.ts";
import { FileLicenseSource, parseLicense } from "../../src/license/status.ts";

const NOW = Date.parse("2030-01-01T00:00:00Z");

async function withDataDir(fn: (dir: string) => Promise<void> | void) {
  const dir = await Deno.makeTempDir();
  const prev = setLogSink(() => {});
  try {
    await fn(dir);
  } finally {
    setLogSink(prev);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("FileLicenseSource reports no_license when license.json is absent", async () => {
  await withDataDir((dir) => {
    const source = new FileLicenseSource(dir);
    assert.equal(source.path, `${dir}/license.json`);
    assert.equal(source.status(), "no_license");
    assert.equal(source.isActive(), false);
    assert.deepEqual(source.describe(), { status: "no_license" });
  });
});

Deno.test("FileLicenseSource is active before expires_at and expired after it", async () => {
  await withDataDir(async (dir) => {
    let now = NOW;
    await Deno.writeTextFile(
      `${dir}/license.json`,
      JSON.stringify({
        id: "LIC-1",
        type: "pro",
        expires_at: "2030-06-01T00:00:00Z",
        max_devices: 3,
        secret: "never reported",
      }),
    );
    const source = new FileLicenseSource(dir, { now: () => now });
    assert.equal(source.status(), "active");
    assert.equal(source.isActive(), true);
    assert.deepEqual(source.describe(), {
      status: "active",
      license_id: "LIC-1",
      license_type: "pro",
      expires_at: "2030-06-01T00:00:00.000Z",
      max_devices: 3,
    });
    now = Date.parse("2030-06-01T00:00:00Z");
    assert.equal(source.status(), "expired", "expiry is judged on every call");
    assert.equal(source.isActive(), false);
  });
});

Deno.test("FileLicenseSource reload() picks up a new, changed or removed file", async () => {
  await withDataDir(async (dir) => {
    const source = new FileLicenseSource(dir, { now: () => NOW });
    assert.equal(source.status(), "no_license");
    await Deno.writeTextFile(
      `${dir}/license.json`,
      JSON.stringify({ expires_at: NOW / 1000 + 60 }),
    );
    assert.equal(source.status(), "no_license", "read only at construction and reload()");
    source.reload();
    assert.equal(source.status(), "active");
    assert.equal(source.record()?.expiresAt, NOW + 60_000);
    await Deno.writeTextFile(`${dir}/license.json`, JSON.stringify({ expires_at: NOW / 1000 - 1 }));
    source.reload();
    assert.equal(source.status(), "expired");
    await Deno.remove(`${dir}/license.json`);
    source.reload();
    assert.equal(source.status(), "no_license");
  });
});

Deno.test("FileLicenseSource reports invalid for malformed files and never throws", async () => {
  const bad = ["{", "[]", "null", '{"expires_at":"soon"}', "{}", '{"expires_at":1e300}'];
  for (const text of bad) {
    await withDataDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/license.json`, text);
      const source = new FileLicenseSource(dir, { now: () => NOW });
      assert.equal(source.status(), "invalid", text);
      assert.equal(source.isActive(), false);
      assert.match(String(source.describe().reason), /^license file /);
    });
  }
  await withDataDir(async (dir) => {
    await Deno.mkdir(`${dir}/license.json`);
    const source = new FileLicenseSource(dir);
    assert.equal(source.status(), "invalid", "a directory cannot be read");
    assert.match(String(source.describe().reason), /cannot be read/);
  });
});

Deno.test("FileLicenseSource uses the injected reader", () => {
  const source = new FileLicenseSource("/data", {
    now: () => NOW,
    readTextFile: (path) => {
      assert.equal(path, "/data/license.json");
      return '{"license_id":"X","license_type":"trial","expires_at":"2031-01-01"}';
    },
  });
  assert.equal(source.status(), "active");
  assert.deepEqual(source.record(), {
    id: "X",
    type: "trial",
    expiresAt: Date.parse("2031-01-01"),
    maxDevices: null,
  });
});

Deno.test("parseLicense() explains why a text is not a license", () => {
  assert.match(String(parseLicense("nope")), /^not valid JSON/);
  assert.equal(parseLicense("5"), "not a JSON object");
  assert.match(String(parseLicense('{"expires_at":true}')), /expires_at is missing/);
});
