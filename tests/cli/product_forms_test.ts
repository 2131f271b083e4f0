/**
 * The product's CLI forms (docs/product-compat.md#cli-forms): `join --link LINK`, the global
 * `--accounts DIR` (license commands read that data directory when no daemon answers) and
 * PRIVITTY_URL.
 */
import assert from "node:assert/strict";
import { type CliIo, runCli as runCliInProcess } from "../../src/cli/mod.ts";
import { legacyLicenseDeviceId } from "../../src/license/device_id.ts";
import { setLogSink } from "../../src/log.ts";
import { LicenseFixture } from "../_helpers/license_fixture.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { type FakeDaemon, startFakeDaemon } from "./fixtures/fake_daemon.ts";
import { closedPortUrl, runCli } from "./fixtures/run_cli.ts";

async function withDaemon(test: (d: FakeDaemon) => Promise<void>): Promise<void> {
  const daemon = await startFakeDaemon({
    rpc: {
      secure_join: { result: 17 },
      license_status: { result: { status: "active", license_id: "from-daemon" } },
    },
  });
  try {
    await test(daemon);
  } finally {
    await daemon.close();
  }
}

/** Runs the CLI in-process (it may read files, like the compiled binary) and captures output. */
async function inProcess(args: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (t) => Promise.resolve(void (stdout += t)),
    stderr: (t) => Promise.resolve(void (stderr += t)),
    env: (name) => env[name],
  };
  const code = await runCliInProcess(args, io);
  return { code, stdout, stderr };
}

const LINK = "https://i.privittytech.com/#AABBCCDD&a=gw%40relay.example";

Deno.test("join --link LINK calls secure_join like the positional form", async () => {
  await withDaemon(async (d) => {
    const run = await runCli(["--url", d.url, "join", "--link", LINK]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "chat 17\n");
    const eq = await runCli(["--url", d.url, "join", `--link=${LINK}`, "--json"]);
    assert.equal(eq.stdout, "17\n");
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["secure_join", [1, LINK]],
      ["secure_join", [1, LINK]],
    ]);
  });
});

Deno.test("join refuses a link given twice or none, with usage exit 2", async () => {
  const both = await runCli(["join", LINK, "--link", LINK]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /give the link once: either 'join <link>' or 'join --link <link>'/);
  const none = await runCli(["join"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /'join' is missing <link>/);
});

Deno.test("--accounts DIR is accepted globally; a running daemon still answers", async () => {
  await withDaemon(async (d) => {
    for (
      const args of [
        ["--accounts", "/var/lib/privitty", "--url", d.url, "license", "status"],
        ["--url", d.url, "license", "status", "--accounts=/var/lib/privitty"],
      ]
    ) {
      const run = await runCli(args);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^status:\s+active$/m);
      assert.match(run.stdout, /^license_id:\s+from-daemon$/m);
    }
    const join = await runCli(["--accounts", "/var/lib/privitty", "--url", d.url, "join", LINK]);
    assert.equal(join.code, 0, join.stderr);
  });
  const rel = await runCli(["--accounts", "relative", "license", "status"]);
  assert.equal(rel.code, 2);
  assert.match(rel.stderr, /--accounts needs an absolute directory path, got 'relative'/);
});

Deno.test("license status with --accounts and no daemon verifies the license file there", async () => {
  await using tmp = await makeTempDir("accounts");
  await using server = await LicenseFixture.start();
  const url = closedPortUrl();
  const none = await inProcess(["--url", url, "--accounts", tmp.path, "license", "status"]);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /^status:\s+no_license$/m);
  assert.match(none.stdout, new RegExp(`^source:\\s+${tmp.path}/privitty.lic$`, "m"));

  // A copy the license server bound to this data directory's stored device fingerprint.
  const fingerprint = "f".repeat(64);
  Deno.writeTextFileSync(`${tmp.path}/device-fingerprint`, fingerprint + "\n");
  const { url: delivery, row } = server.issue({ type: "edge", maxDevices: 5 });
  const res = await server.fetch(`${delivery}/activate`, {
    method: "POST",
    body: JSON.stringify({ device_id: await legacyLicenseDeviceId(fingerprint) }),
  });
  Deno.writeTextFileSync(`${tmp.path}/privitty.lic`, JSON.stringify(await res.json()));
  Deno.writeTextFileSync(`${tmp.path}/server.pem`, server.key.publicPem);
  Deno.env.set("EDGE_LICENSE_TRUSTED_KEYS", `${tmp.path}/server.pem`);
  const statusJson = ["--url", url, "--accounts", tmp.path, "license", "status", "--json"];
  const prev = setLogSink(() => {});
  try {
    const json = await inProcess(statusJson);
    assert.equal(json.code, 0, json.stderr);
    const status = JSON.parse(json.stdout);
    assert.equal(status.status, "active");
    assert.equal(status.license_id, row.id);
    assert.equal(status.license_type, "edge");
    assert.equal(status.max_devices, 5);
    assert.equal(status.source, `${tmp.path}/privitty.lic`);
    Deno.env.delete("EDGE_LICENSE_TRUSTED_KEYS");
    const untrusted = await inProcess(statusJson);
    assert.equal(JSON.parse(untrusted.stdout).status, "invalid", "only trusted keys count");
  } finally {
    Deno.env.delete("EDGE_LICENSE_TRUSTED_KEYS");
    setLogSink(prev);
  }
  const missing = await inProcess([
    "--url",
    url,
    "--accounts",
    `${tmp.path}/nope`,
    "license",
    "status",
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no gateway answers, and --accounts .*\/nope does not exist/);
});

Deno.test("license activate|sync|deactivate with --accounts and no daemon say what is missing", async () => {
  await using tmp = await makeTempDir("accounts");
  const url = closedPortUrl();
  for (const args of [["activate", "https://plm.example/v1/license/T"], ["sync"], ["deactivate"]]) {
    const run = await inProcess(["--url", url, "--accounts", tmp.path, "license", ...args]);
    assert.equal(run.code, 1, args[0]);
    assert.match(
      run.stderr,
      new RegExp(
        `cannot reach the gateway at .*; license ${args[0]} against --accounts ${tmp.path} ` +
          "needs the running daemon",
      ),
    );
  }
  const plain = await inProcess(["--url", url, "license", "status"]);
  assert.equal(plain.code, 3, "without --accounts an unreachable daemon stays exit 3");
});

Deno.test("without read permission --accounts says how to grant it", async () => {
  const run = await runCli(["--url", closedPortUrl(), "--accounts", "/etc", "license", "status"]);
  assert.equal(run.code, 1);
  assert.match(
    run.stderr,
    /this CLI may not read --accounts \/etc \(run it with --allow-read=\/etc/,
  );
});

Deno.test("PRIVITTY_URL selects the gateway when EDGE_URL and --url are absent", async () => {
  await withDaemon(async (d) => {
    const run = await inProcess(["join", LINK], { PRIVITTY_URL: d.url });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(d.calls.length, 1);
    const bad = await inProcess(["join", LINK], { PRIVITTY_URL: "nope" });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /PRIVITTY_URL \(twin of EDGE_URL\) is not a valid URL/);
  });
});
