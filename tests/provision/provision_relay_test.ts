/**
 * provision() end to end against the project's test relay (in the test runner's network
 * namespace): POST /new registration, the relay's autoconfig, IMAPS and SMTPS logins verified
 * with the relay certificate trusted through DENO_CERT, key creation; then a restart that does
 * no registration and is fast.
 */
import assert from "node:assert/strict";
import type { GatewayEvent } from "../../src/events/types.ts";
import { provision, type ProvisionResult } from "../../src/provision/mod.ts";
import { ConfigKey } from "../../src/store/mod.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { testConfig } from "./_fakes.ts";

function accountsOnRelay(relay: Relay): number {
  return [...Deno.readDirSync(`${relay.dir}/users.d`)].filter((e) => e.name.includes("@")).length;
}

function close(p: ProvisionResult): void {
  p.store.close();
  p.lock.release();
}

Deno.test({
  name:
    "provision() on the real relay: first boot configures everything, a restart registers nothing",
  ignore: NO_RELAY,
  async fn() {
    assert.ok(
      Deno.env.get("DENO_CERT"),
      "scripts/test.sh trusts the relay certificate via DENO_CERT",
    );
    await using relay = await startRelay();
    await using tmp = await makeTempDir("prov-relay");
    const dataDir = `${tmp.path}/data`;
    const config = testConfig(dataDir, { EDGE_SERVER: relay.httpOrigin });
    const events: GatewayEvent[] = [];

    const first = await provision(config, { events: { publish: (e) => events.push(e) } });
    let addr: string;
    let fingerprint: string;
    try {
      addr = first.addr;
      fingerprint = first.fingerprint;
      assert.match(addr, /^[a-z0-9]{9}@_relay\.test$/);
      assert.equal(first.firstBoot, true);
      assert.deepEqual(first.serverParams, {
        imap: { host: relay.host, port: relay.imapsPort, security: "ssl", user: addr },
        smtp: { host: relay.host, port: relay.smtpsPort, security: "ssl", user: addr },
      });
      assert.match(fingerprint, /^[0-9A-F]{40}$/);
      assert.equal(first.store.keys.current()?.fingerprint, fingerprint);
      assert.equal(first.store.config.get(ConfigKey.DISPLAY_NAME), "Gateway One");
      assert.equal(accountsOnRelay(relay), 1);
      const progress = events.flatMap((e) => e.kind === "ConfigureProgress" ? [e.progress] : []);
      assert.equal(progress.at(-1), 1000);
    } finally {
      close(first);
    }

    // Start-up times are measured by `deno task bench` (BENCHMARKS.md "Start-up").
    const again = await provision(config);
    try {
      assert.equal(again.addr, addr);
      assert.equal(again.fingerprint, fingerprint);
      assert.equal(again.firstBoot, false);
      assert.equal(accountsOnRelay(relay), 1, "no new registration");
    } finally {
      close(again);
    }
  },
});

Deno.test({
  name: "provision() names the certificate problem when the relay's TLS is not trusted",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("prov-relay");
    // A process without DENO_CERT: the relay's self-signed certificate must be refused.
    const code = `import { provision } from ${
      JSON.stringify(new URL("../../src/provision/mod.ts", import.meta.url).href)
    };
      import { parseConfig } from ${
      JSON.stringify(new URL("../../src/config.ts", import.meta.url).href)
    };
      const env = { EDGE_DATA_DIR: ${JSON.stringify(`${tmp.path}/d`)}, EDGE_SERVER: ${
      JSON.stringify(relay.httpOrigin)
    }, EDGE_PROFILE: "x" };
      try { await provision(parseConfig([], (n) => env[n]), { probeTimeoutMs: 2000 }); console.log("OK"); }
      catch (e) { console.log(e.message); }`;
    const env = { ...Deno.env.toObject() };
    delete env.DENO_CERT;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--config", new URL("../../deno.json", import.meta.url).pathname, code],
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.match(
      text,
      /Autodiscovery found no working IMAP and SMTP server for .*relay autoconfig: IMAP 127\.0\.0\.1:\d+\/ssl: IMAP login failed: (self-signed certificate|invalid peer certificate)/,
    );
  },
});
