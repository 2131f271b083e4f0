/**
 * The offline license check (`--accounts DIR license status`): the device id is v2, from the
 * account database's installation id and this machine's id (docs/identity.md), read-only.
 */
import assert from "node:assert/strict";
import { DataDirLayout } from "../../src/constants.ts";
import { licenseDeviceId } from "../../src/license/device_id.ts";
import { inspectLicense } from "../../src/license/inspect.ts";
import { writeLicenseFile } from "../../src/license/license_file.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { findMachineId } from "../../src/viewer/device_fingerprint.ts";
import { LicenseFixture } from "../_helpers/license_fixture.ts";
import { makeTempDir } from "../_helpers/temp.ts";

Deno.test("inspectLicense() judges against the installation's v2 device id", async () => {
  await using tmp = await makeTempDir("inspect");
  await using server = await LicenseFixture.start();
  await Deno.mkdir(`${tmp.path}/accounts/1`, { recursive: true });
  await Deno.writeTextFile(`${tmp.path}/${DataDirLayout.MACHINE_ID}`, "ab".repeat(16) + "\n");
  const store = Store.open(`${tmp.path}/${DataDirLayout.DATABASE}`);
  const installationId = store.config.get(ConfigKey.INSTALLATION_ID)!;
  store.close();
  const deviceId = await licenseDeviceId(installationId, (await findMachineId(tmp.path))!);
  const { url, row } = server.issue({ maxDevices: 1 });
  const res = await server.fetch(`${url}/activate`, {
    method: "POST",
    body: JSON.stringify({ device_id: deviceId }),
  });
  await writeLicenseFile(`${tmp.path}/${DataDirLayout.LICENSE_FILE}`, await res.json());
  const out = await inspectLicense(tmp.path, { keys: server.trusted });
  assert.equal(out.status, "active", String(out.reason));
  assert.equal(out.license_id, row.id);
  assert.equal(out.device_id, deviceId);
});
