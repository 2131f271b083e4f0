/** Tests of `fingerprint`: this machine's value, stored or computed, never a silent wrong one. */
import assert from "node:assert/strict";
import { cliFingerprint } from "../../src/cli/device.ts";
import { computeFingerprint, primaryMac } from "../../src/viewer/device_fingerprint.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { runCli } from "./fixtures/run_cli.ts";

Deno.test("cliFingerprint() reads the value the daemon stored in --accounts DIR", async () => {
  await using dir = await makeTempDir("cli-fpr");
  await Deno.writeTextFile(`${dir.path}/device-fingerprint`, `${"ab".repeat(32)}\n`);
  assert.deepEqual(await cliFingerprint(dir.path), {
    fingerprint: "ab".repeat(32),
    source: `${dir.path}/device-fingerprint`,
  });
});

Deno.test("cliFingerprint() computes MAC + machine id as the daemon does", async () => {
  let machineId: string;
  try {
    machineId = Deno.readTextFileSync("/etc/machine-id").trim();
  } catch {
    return; // no machine id on this host: nothing to compare with
  }
  const mac = primaryMac(Deno.networkInterfaces()) ?? "";
  const f = await cliFingerprint();
  assert.equal(f.fingerprint, await computeFingerprint(mac, machineId));
  assert.equal(f.source, "computed");
});

Deno.test("fingerprint without the permissions it needs says which, exit 1", async () => {
  const run = await runCli(["fingerprint"]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /--allow-sys=networkInterfaces --allow-read=\/etc\/machine-id/);
  assert.equal(run.stdout, "");
});
