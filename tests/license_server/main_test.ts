/**
 * The license server as `deno task license-server` runs it (scripts/license_server.sh): issue
 * prints the delivery URL last, public-key prints SPKI PEM, list/renew/revoke, serve answers.
 */
import assert from "node:assert/strict";
import { importTrustedKey } from "../../src/license/verify.ts";
import { LicenseDb } from "../../license_server/db.ts";
import { licenseServerCommand, startLicenseServer } from "../_helpers/license_server.ts";
import { makeTempDir } from "../_helpers/temp.ts";

Deno.test("license-server issue, public-key, list, renew and revoke work on a data dir", async () => {
  await using tmp = await makeTempDir("licsrv-cli");
  const dir = `${tmp.path}/srv`;
  const issued = await licenseServerCommand(
    "issue",
    "--data-dir",
    dir,
    "--type",
    "trial",
    "--days",
    "30",
    "--max-devices",
    "2",
    "--customer",
    "ACME",
  );
  assert.equal(issued.code, 0, issued.stderr);
  const lines = issued.stdout.trim().split("\n");
  assert.match(
    lines[0],
    /^issued license (LIC-\w+): type trial, customer ACME, expires .*, max devices 2, grace 7 day\(s\)$/,
  );
  const id = /license (LIC-\w+)/.exec(lines[0])![1];
  assert.match(lines.at(-1)!, /^http:\/\/127\.0\.0\.1:7300\/v1\/license\/[\w-]{32}$/);

  const pub = await licenseServerCommand("public-key", "--data-dir", dir);
  assert.equal(pub.code, 0);
  assert.match(pub.stdout, /^-----BEGIN PUBLIC KEY-----\n[\w+/=]+\n-----END PUBLIC KEY-----\n$/);
  await importTrustedKey("public-key output", pub.stdout);
  assert.equal((await licenseServerCommand("public-key", "--data-dir", dir)).stdout, pub.stdout);
  assert.equal((await Deno.stat(`${dir}/signing-key.pem`)).mode! & 0o777, 0o600);

  const renewed = await licenseServerCommand("renew", id, "--data-dir", dir, "--days", "90");
  assert.match(renewed.stdout, new RegExp(`^renewed ${id} until `));
  assert.equal(
    (await licenseServerCommand("revoke", id, "--data-dir", dir)).stdout,
    `revoked ${id}\n`,
  );
  const list = await licenseServerCommand("list", "--data-dir", dir, "--json");
  const rows = JSON.parse(list.stdout);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].license_id, id);
  assert.equal(rows[0].revoked, true);
  assert.deepEqual(rows[0].devices, []);

  const unknown = await licenseServerCommand("revoke", "LIC-NOPE", "--data-dir", dir);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no license LIC-NOPE/);
  const usage = await licenseServerCommand("issue", "--data-dir", dir);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /issue needs --type/);
  assert.equal((await licenseServerCommand("list")).code, 2, "--data-dir is required");
});

Deno.test("license-server serve answers on its port and issue then prints that port", async () => {
  await using tmp = await makeTempDir("licsrv-serve");
  const dir = `${tmp.path}/srv`;
  await using server = await startLicenseServer(dir);
  const issued = await licenseServerCommand(
    "issue",
    "--data-dir",
    dir,
    "--type",
    "standard",
    "--days",
    "1",
    "--max-devices",
    "1",
  );
  const url = issued.stdout.trim().split("\n").at(-1)!;
  assert.ok(url.startsWith(`${server.origin}/v1/license/`), url);
  const res = await fetch(`${url}/activate`, {
    method: "POST",
    body: JSON.stringify({ device_id: "d".repeat(64) }),
  });
  assert.equal(res.status, 200);
  assert.equal(typeof (await res.json()).license_jwt, "string");
  assert.equal(await server.stop(), 0);
});

Deno.test("license-server release frees a seat from the command line", async () => {
  await using tmp = await makeTempDir("licsrv-release");
  const dir = `${tmp.path}/srv`;
  const issued = await licenseServerCommand(
    "issue",
    "--data-dir",
    dir,
    "--type",
    "edge",
    "--days",
    "30",
    "--max-devices",
    "1",
  );
  const id = /license (LIC-\w+)/.exec(issued.stdout)![1];
  const device = "d".repeat(64);
  const db = new LicenseDb(`${dir}/licenses.db`);
  db.bind(db.byId(id)!, { device, newSeat: true }, Date.now());
  db.close();
  const released = await licenseServerCommand("release", id, device, "--data-dir", dir);
  assert.equal(released.code, 0, released.stderr);
  assert.equal(released.stdout, `released the seat of device ${device} on ${id}\n`);
  const list = JSON.parse((await licenseServerCommand("list", "--data-dir", dir, "--json")).stdout);
  assert.deepEqual(list[0].devices, []);
  const again = await licenseServerCommand("release", id, device, "--data-dir", dir);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /holds no seat/);
  assert.equal((await licenseServerCommand("release", id, "--data-dir", dir)).code, 2);
});
