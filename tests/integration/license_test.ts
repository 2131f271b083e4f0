/**
 * Licenses end to end: real daemons (production permission set, from source, trusting the test
 * license server's key through EDGE_LICENSE_TRUSTED_KEYS) on the real relay, against the
 * project's license server run as `deno task license-server` runs it.
 */
import assert from "node:assert/strict";
import { type DaemonProcess, spawnDaemon } from "../_helpers/daemon.ts";
import { joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { licenseServerCommand, startLicenseServer } from "../_helpers/license_server.ts";
import { freePort } from "../_helpers/ports.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";
import { poll } from "../_helpers/poll.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DAY = 86_400_000;
const SEND = [1, 10, 11, "/nonexistent/a.pdf", true, false, 0];

/** Issues a license; returns its id and delivery URL (the last line printed). */
async function issue(dir: string, ...extra: string[]): Promise<{ id: string; url: string }> {
  const out = await licenseServerCommand(
    "issue",
    "--data-dir",
    dir,
    "--type",
    "standard",
    "--max-devices",
    "1",
    ...(extra.some((a) => a === "--days" || a === "--expires-at") ? [] : ["--days", "30"]),
    ...extra,
  );
  assert.equal(out.code, 0, out.stderr);
  const lines = out.stdout.trim().split("\n");
  return { id: /license (LIC-\w+)/.exec(lines[0])![1], url: lines.at(-1)! };
}

async function rpc(d: DaemonProcess, method: string, params: unknown[] = [1]) {
  const body = await d.rpc(method, params);
  return body;
}

async function status(d: DaemonProcess): Promise<Record<string, unknown>> {
  const body = await rpc(d, "license_status");
  assert.ok(body && "result" in body, JSON.stringify(body));
  return body.result as Record<string, unknown>;
}

/** The CLI as a client of `d`. */
async function cli(d: DaemonProcess, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env=EDGE_URL", `${ROOT}main.ts`, "--url", d.url, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The error code of a gated call (or "ok-ish" -1 past the gate). */
async function gateCode(d: DaemonProcess): Promise<number> {
  const body = await rpc(d, "secure_send_file", SEND);
  return (body as { error: { code: number } }).error.code;
}

async function restart(
  relay: Relay,
  dataDir: string,
  env: Record<string, string>,
  old?: DaemonProcess,
): Promise<DaemonProcess> {
  if (old) assert.equal(await old.stop(), 0, old.output());
  const d = spawnDaemon({ relay, dataDir, env });
  await d.waitHealthy();
  return d;
}

Deno.test({
  name: "a gateway activates its license at start and follows sync, deactivation and bad files",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("lic-int");
    const srvDir = `${tmp.path}/srv`;
    await using server = await startLicenseServer(srvDir);
    const keyFile = `${tmp.path}/license-server.pem`;
    await Deno.writeTextFile(
      keyFile,
      (await licenseServerCommand("public-key", "--data-dir", srvDir)).stdout,
    );
    const first = await issue(srvDir, "--type", "pro", "--max-devices", "1");
    const dataDir = `${tmp.path}/gw`;
    const env = { EDGE_LICENSE_TRUSTED_KEYS: keyFile };
    let d = spawnDaemon({ relay, dataDir, env: { ...env, EDGE_LICENSE_URL: first.url } });
    try {
      let deviceId = "";
      await t.step(
        "step 3 activates before HTTP and logs id, type, expiry, max devices",
        async () => {
          await d.waitHealthy();
          const out = d.output();
          const activated = out.split("\n").find((l) => l.includes("license activated"));
          assert.ok(activated, out);
          assert.match(activated, new RegExp(`license_id="${first.id}" license_type="pro"`));
          assert.match(activated, /expires_at="[^"]+" max_devices=1/);
          assert.ok(
            out.indexOf("license activated") < out.indexOf("step 7/7 HTTP server listening"),
          );
          assert.ok(
            !out.includes(first.url.split("/").at(-1)!),
            "the delivery token is not logged",
          );
          const s = await status(d);
          assert.equal(s.status, "active");
          assert.equal(s.license_id, first.id);
          deviceId = s.device_id as string;
          assert.match(deviceId, /^[0-9a-f]{64}$/);
          assert.ok((await Deno.stat(`${dataDir}/privitty.lic`)).isFile);
          assert.notEqual(await gateCode(d), -32001, "secure_* pass the gate");
        },
      );

      await t.step("the seat limit refuses the next device clearly", async () => {
        const res = await fetch(`${first.url}/activate`, {
          method: "POST",
          body: JSON.stringify({ device_id: "b".repeat(64) }),
        });
        assert.equal(res.status, 409);
        const body = await res.json();
        assert.equal(body.error, "seat_limit");
        assert.match(body.message, /allows 1 device\(s\) and all are in use/);
      });

      await t.step("a restart with the file present does not activate again", async () => {
        d = await restart(relay, dataDir, { ...env, EDGE_LICENSE_URL: first.url }, d);
        assert.match(d.output(), /license file present; skipping activation \(status active\)/);
      });

      await t.step(
        "a server-side revoke reaches the gateway on sync, without a restart",
        async () => {
          assert.equal(
            (await licenseServerCommand("revoke", first.id, "--data-dir", srvDir)).code,
            0,
          );
          const synced = await cli(d, "license", "sync", "--json");
          assert.equal(synced.code, 0, synced.stderr);
          assert.equal(JSON.parse(synced.stdout).status, "invalid");
          const s = await status(d);
          assert.equal(s.reason, `license ${first.id} was revoked by its issuer`);
          const gated = await rpc(d, "secure_send_file", SEND);
          const err = (gated as { error: { code: number; message: string } }).error;
          assert.equal(err.code, -32001);
          assert.match(
            err.message,
            /license status is invalid \(license .* was revoked by its issuer\)/,
          );
        },
      );

      await t.step("license activate replaces it at once; deactivate frees the seat", async () => {
        const second = await issue(srvDir);
        const activated = await cli(d, "license", "activate", second.url, "--json");
        assert.equal(activated.code, 0, activated.stderr);
        assert.equal(JSON.parse(activated.stdout).status, "active");
        assert.notEqual(await gateCode(d), -32001);
        const deactivated = await cli(d, "license", "deactivate");
        assert.equal(deactivated.code, 0, deactivated.stderr);
        const s = await status(d);
        assert.equal(s.status, "no_license");
        assert.match(String(s.reason), /deactivated on this device; the file is kept/);
        assert.equal(s.license_id, second.id, "the kept file can be inspected");
        assert.equal(await gateCode(d), -32001);
        const list = JSON.parse(
          (await licenseServerCommand("list", "--data-dir", srvDir, "--json")).stdout,
        );
        const row = list.find((r: { license_id: string }) => r.license_id === second.id);
        assert.deepEqual(row.devices, [], "the seat is free on the server");
      });

      await t.step("expired and grace-period licenses", async () => {
        const past = new Date(Date.now() - DAY).toISOString();
        const expired = await issue(srvDir, "--expires-at", past, "--grace-days", "0");
        const e = await rpc(d, "license_activate", [1, expired.url]);
        assert.equal((e as { result: { status: string } }).result.status, "expired");
        assert.equal(await gateCode(d), -32001);
        const graced = await issue(srvDir, "--expires-at", past, "--grace-days", "3");
        const g = await rpc(d, "license_activate", [1, graced.url]);
        assert.equal((g as { result: { status: string } }).result.status, "grace_period");
        assert.notEqual(await gateCode(d), -32001, "the grace period still permits sends");
      });

      await t.step("a tampered file is invalid after a restart", async () => {
        await d.stop();
        const path = `${dataDir}/privitty.lic`;
        const file = JSON.parse(await Deno.readTextFile(path));
        const [h, p, sig] = file.license_jwt.split(".");
        const flipped = p.slice(0, 10) + (p[10] === "A" ? "B" : "A") + p.slice(11);
        await Deno.writeTextFile(
          path,
          JSON.stringify({ ...file, license_jwt: `${h}.${flipped}.${sig}` }),
        );
        d = await restart(relay, dataDir, env);
        const s = await status(d);
        assert.equal(s.status, "invalid");
        assert.match(String(s.reason), /signature does not verify|not JSON|lacks a valid claim/);
      });

      await t.step("a file bound to another device is invalid", async () => {
        const other = await issue(srvDir);
        const res = await fetch(`${other.url}/activate`, {
          method: "POST",
          body: JSON.stringify({ device_id: "c".repeat(64) }),
        });
        const { license_jwt } = await res.json();
        await d.stop();
        await Deno.writeTextFile(`${dataDir}/privitty.lic`, JSON.stringify({ license_jwt }));
        d = await restart(relay, dataDir, env);
        const s = await status(d);
        assert.equal(s.status, "invalid");
        assert.match(
          String(s.reason),
          new RegExp(`license ${other.id} is bound to another device`),
        );
      });

      await t.step(
        "a clock rolled back behind the recorded high-water mark is clock_tampered",
        async () => {
          const fresh = await issue(srvDir);
          assert.equal((await cli(d, "license", "activate", fresh.url)).code, 0);
          await d.stop();
          const store = Store.open(`${dataDir}/accounts/1/gateway.db`);
          // As if the gateway had already lived two days from now (the mark in the form this
          // build writes: src/license/local_state.ts): today's clock is "set back".
          store.config.set(
            ConfigKey.LICENSE_CLOCK_HIGH_WATER,
            JSON.stringify({ v: 2, ms: Date.now() + 2 * DAY }),
          );
          store.close();
          d = await restart(relay, dataDir, env);
          const s = await status(d);
          assert.equal(s.status, "clock_tampered");
          assert.match(String(s.reason), /earlier than a time this gateway already saw/);
          const err = ((await rpc(d, "secure_send_file", SEND)) as { error: { message: string } })
            .error;
          assert.match(err.message, /clock_tampered .*Correct the system clock/);
        },
      );
    } finally {
      await d.stop();
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "with the license server down gateways start, message, and activate later (by hand, by the retry)",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("lic-down");
    const srvDir = `${tmp.path}/srv`;
    const port = freePort();
    // Two installations, two seats (docs/identity.md).
    const { url } = await issue(
      srvDir,
      "--base-url",
      `http://127.0.0.1:${port}`,
      "--max-devices",
      "2",
    );
    const keyFile = `${tmp.path}/license-server.pem`;
    await Deno.writeTextFile(
      keyFile,
      (await licenseServerCommand("public-key", "--data-dir", srvDir)).stdout,
    );
    await using alice = await GatewayPeer.start("Alice", relay, {
      env: { EDGE_LICENSE_URL: url, EDGE_LICENSE_TRUSTED_KEYS: keyFile },
    });
    await using bob = await GatewayPeer.start("Bob", relay, {
      env: { EDGE_LICENSE_URL: url, EDGE_LICENSE_TRUSTED_KEYS: keyFile },
    });
    assert.equal((await status(alice.daemon)).status, "no_license");
    assert.match(
      alice.daemon.output(),
      /license activation failed; starting with status no_license/,
    );
    assert.match(alice.daemon.output(), /is unreachable/);

    const pair = await joinBySecureJoin(alice, bob);
    const from = bob.events.length;
    await alice.call("send_msg", 1, pair.inviterChat, { text: "hello without a license" });
    const got = await bob.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, from);
    const msgs = await bob.call<Record<string, { text: string }>>("get_messages", 1, [
      got.event.msg_id,
    ]);
    assert.equal(Object.values(msgs)[0].text, "hello without a license");

    await using server = await startLicenseServer(srvDir, port);
    const activated = await alice.call<{ status: string }>("license_activate", 1, url);
    assert.equal(activated.status, "active");
    assert.notEqual(await gateCode(alice.daemon), -32001, "gated methods work at once");
    // Bob was left alone: its background retry (2 s, 4 s, 8 s, … apart) activates by itself.
    const bobStatus = await poll(() => status(bob.daemon), (st) => st.status === "active", 90_000);
    assert.equal(bobStatus.status, "active", bob.daemon.output().slice(-3000));
    assert.match(bob.daemon.output(), /background license activation succeeded/);
    await server.stop();
  },
});
