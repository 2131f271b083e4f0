/**
 * End to end: the real daemon started the way the product documents it
 * (docs/product-compat.md#daemon-flags, #environment, #start-order), as
 * `privitty-edged --accounts DIR --listen HOST:PORT` with PRIVITTY_* variables, against the
 * project's relay, answering the product's /health, /auth and privitty_* methods.
 */
import assert from "node:assert/strict";
import { spawnDaemon } from "../_helpers/daemon.ts";
import { startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";

async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("privitty-edged --accounts --listen with PRIVITTY_* serves the product's API on the relay", async (t) => {
  await using relay = await startRelay();
  await using tmp = await makeTempDir("product");
  const dataDir = `${tmp.path}/privitty`;
  // start.sh runs "$DENO run … main.ts": a link named privitty-edged makes that argv[0].
  const privittyEdged = `${tmp.path}/privitty-edged`;
  await Deno.symlink(Deno.execPath(), privittyEdged);
  const env = {
    DENO: privittyEdged,
    PRIVITTY_LICENSE_URL: "https://plm.privittytech.com/v1/license/TOKEN123",
  };

  await t.step("without PRIVITTY_PROFILE the first start names both variables", async () => {
    const d = spawnDaemon({
      relay,
      dataDir: `${tmp.path}/noprofile`,
      productForm: true,
      profile: null,
      env,
    });
    assert.equal(await d.exited, 1);
    assert.match(d.output(), /EDGE_PROFILE \(or PRIVITTY_PROFILE\) is required on first start/);
  });

  await t.step("--listen together with --port is refused clearly", async () => {
    const d = spawnDaemon({ relay, dataDir, productForm: true, env, args: ["--port", "7300"] });
    assert.equal(await d.exited, 2);
    assert.match(d.output(), /--listen and --port both set the listen address; give only one/);
  });

  await t.step("first start: the product's /health, /auth and privitty_* methods", async () => {
    await using d = spawnDaemon({
      relay,
      dataDir,
      productForm: true,
      profile: "gateway01",
      env,
      args: ["--cors"],
    });
    await d.waitHealthy();
    const health = await (await fetch(`${d.url}/health`)).json();
    assert.deepEqual([health.status, health.service, health.version], [
      "ok",
      "privitty-edged",
      "0.1.0",
    ]);
    assert.deepEqual(await d.rpc("get_config", [1, "displayname"]), {
      jsonrpc: "2.0",
      id: 1,
      result: "gateway01",
    });
    const gated = await d.rpc("privitty_send_file", [1, 10, 11, `${dataDir}/a.pdf`, true, true, 0]);
    assert.equal((gated?.error as { code: number }).code, -32001);
    const discover = await d.rpc("rpc.discover", []);
    const names = (discover?.result as { methods: { name: string }[] }).methods.map((m) => m.name);
    for (const name of ["privitty_send_file", "secure_send_file", "privitty_revoke_file_access"]) {
      assert.ok(names.includes(name), name);
    }

    // The device fingerprint stored at step 2b is what /auth accepts
    // (docs/product-compat.md#viewer-auth, #start-order).
    const stored = Deno.readTextFileSync(`${dataDir}/device-fingerprint`).trim();
    const wrong = await post(`${d.url}/auth`, { device_fingerprint: "ab".repeat(32) });
    assert.deepEqual(wrong, { status: 403, body: { error: "Device fingerprint mismatch" } });
    const ok = await post(`${d.url}/auth`, { device_fingerprint: stored });
    assert.equal(ok.status, 200);
    assert.equal((ok.body as { expires_in: number }).expires_in, 3600);

    const log = d.output();
    const at = (text: string) => log.indexOf(text);
    assert.ok(at("step 2b/7 device fingerprint: done") > at("step 2/7 accounts directory"), log);
    assert.ok(at("step 3/7 license") > at("step 2b/7 device fingerprint"), log);
    assert.equal(await d.stop(), 0);
  });

  await t.step("EDGE_PROFILE wins over PRIVITTY_PROFILE, and the daemon says so", async () => {
    await using d = spawnDaemon({
      relay,
      dataDir,
      productForm: true,
      profile: "ignored",
      env: { ...env, EDGE_PROFILE: "edge name" },
    });
    await d.waitHealthy();
    assert.equal((await d.rpc("get_config", [1, "displayname"]))?.result, "edge name");
    assert.match(d.output(), /EDGE_PROFILE is set, so PRIVITTY_PROFILE is ignored/);
    assert.equal(await d.stop(), 0);
  });
});
