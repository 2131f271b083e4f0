/** Tests of the device fingerprint: MAC choice, machine-id sources, the exact formula. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { setLogSink } from "../../src/log.ts";
import {
  computeFingerprint,
  type InterfaceInfo,
  loadDeviceFingerprint,
  primaryMac,
  readMachineId,
  storeDeviceFingerprint,
} from "../../src/viewer/device_fingerprint.ts";

const lo: InterfaceInfo = { name: "lo", address: "127.0.0.1", mac: "00:00:00:00:00:00" };
const eth0: InterfaceInfo = { name: "eth0", address: "10.0.0.2", mac: "02:FC:00:00:00:01" };
const eth0v6: InterfaceInfo = { name: "eth0", address: "fe80::1", mac: "02:fc:00:00:00:01" };
const wlan: InterfaceInfo = { name: "wlan0", address: "192.168.1.5", mac: "aa:bb:cc:dd:ee:ff" };

function quiet<T>(fn: () => Promise<T>): Promise<T> {
  const prev = setLogSink(() => {});
  return fn().finally(() => setLogSink(prev));
}

Deno.test("primaryMac() takes the first non-loopback interface with a non-zero MAC", () => {
  assert.equal(primaryMac([lo, eth0, eth0v6, wlan]), "02:fc:00:00:00:01");
  assert.equal(primaryMac([lo, { ...eth0, mac: "00:00:00:00:00:00" }, wlan]), "aa:bb:cc:dd:ee:ff");
  assert.equal(primaryMac([{ ...wlan, name: "lo" }]), undefined);
  assert.equal(primaryMac([{ ...wlan, address: "::1" }]), undefined);
  assert.equal(primaryMac([lo]), undefined);
  assert.equal(primaryMac([]), undefined);
});

Deno.test("computeFingerprint() is lowercase hex SHA-256 of mac + machine id", async () => {
  const expected = createHash("sha256").update("02:fc:00:00:00:01" + "0123abcd").digest("hex");
  assert.equal(await computeFingerprint("02:fc:00:00:00:01", "0123abcd"), expected);
  assert.match(expected, /^[0-9a-f]{64}$/);
});

Deno.test("readMachineId() prefers /etc/machine-id, trimmed", async () => {
  const files: Record<string, string> = { "/etc/machine-id": " 5f3e\n", "/d/machine-id": "local" };
  const result = await readMachineId("/d", {
    readTextFile: (p) => p in files ? Promise.resolve(files[p]) : Promise.reject(new Error("no")),
  });
  assert.deepEqual(result, { machineId: "5f3e", path: "/etc/machine-id" });
});

Deno.test("readMachineId() falls back to <dataDir>/machine-id, then generates one (0600)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const sources = { systemMachineIdPath: `${dir}/missing-etc-machine-id` };
    const first = await quiet(() => readMachineId(dir, sources));
    assert.match(first.machineId, /^[0-9a-f]{32}$/);
    assert.equal(first.path, `${dir}/machine-id`);
    assert.equal((await Deno.readTextFile(first.path)).trim(), first.machineId);
    assert.equal((await Deno.stat(first.path)).mode! & 0o777, 0o600);
    const second = await readMachineId(dir, sources);
    assert.deepEqual(second, first, "stable across restarts");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readMachineId() reads the id another process created in the meantime", async () => {
  let created = false;
  const result = await readMachineId("/d", {
    readTextFile: (p) =>
      created && p === "/d/machine-id" ? Promise.resolve("raced") : Promise.reject(new Error()),
    createFile: () => {
      created = true;
      return Promise.reject(new Deno.errors.AlreadyExists("exists"));
    },
  });
  assert.deepEqual(result, { machineId: "raced", path: "/d/machine-id" });
});

Deno.test("loadDeviceFingerprint() combines the injected MAC and machine id", async () => {
  const fp = await loadDeviceFingerprint("/d", {
    interfaces: () => [lo, eth0],
    readTextFile: (p) =>
      p === "/etc/machine-id" ? Promise.resolve("abc\n") : Promise.reject(new Error()),
  });
  assert.deepEqual(fp, {
    fingerprint: await computeFingerprint("02:fc:00:00:00:01", "abc"),
    mac: "02:fc:00:00:00:01",
    machineId: "abc",
    machineIdPath: "/etc/machine-id",
  });
});

Deno.test("loadDeviceFingerprint() uses an empty MAC when interfaces are unavailable", async () => {
  const fp = await quiet(() =>
    loadDeviceFingerprint("/d", {
      interfaces: () => {
        throw new Deno.errors.NotCapable('Requires sys access to "networkInterfaces"');
      },
      readTextFile: () => Promise.resolve("abc"),
    })
  );
  assert.equal(fp.mac, "");
  assert.equal(fp.fingerprint, await computeFingerprint("", "abc"));
});

Deno.test("storeDeviceFingerprint() writes it once (0600), keeps it, rewrites it when the device changed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "edge-fpr-" });
  try {
    const sources = (mac: string) => ({
      interfaces: () => [{ name: "eth0", address: "10.0.0.2", mac }],
      readTextFile: (path: string) =>
        path === "/etc/machine-id" ? Promise.resolve("0123abcd\n") : Deno.readTextFile(path),
    });
    const first = await quiet(() => storeDeviceFingerprint(dir, sources("02:fc:00:00:00:01")));
    assert.equal(first.change, "created");
    assert.equal(first.fingerprint, await computeFingerprint("02:fc:00:00:00:01", "0123abcd"));
    assert.equal(Deno.readTextFileSync(`${dir}/device-fingerprint`), first.fingerprint + "\n");
    assert.equal(Deno.statSync(`${dir}/device-fingerprint`).mode! & 0o777, 0o600);
    const again = await quiet(() => storeDeviceFingerprint(dir, sources("02:fc:00:00:00:01")));
    assert.equal(again.change, "unchanged");
    const moved = await quiet(() => storeDeviceFingerprint(dir, sources("aa:bb:cc:dd:ee:ff")));
    assert.equal(moved.change, "updated");
    assert.notEqual(moved.fingerprint, first.fingerprint);
    assert.equal(Deno.readTextFileSync(`${dir}/device-fingerprint`), moved.fingerprint + "\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
