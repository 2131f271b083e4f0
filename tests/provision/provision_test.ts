/** Tests of provision() with a fake relay (fetch), fake logins and a real data directory. */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import type { GatewayEvent } from "../../src/events/types.ts";
import { setLogSink } from "../../src/log.ts";
import { readPublicKey } from "../../src/crypto/pgp.ts";
import { provision, type ProvisionDeps } from "../../src/provision/mod.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { autoconfigXml, fakeFetch, fakeLogins, testConfig } from "./_fakes.ts";

const NEW = "http://127.0.0.1:8080/new";
const AUTOCONFIG = "http://127.0.0.1:8080/.well-known/autoconfig/mail/config-v1.1.xml";
const ACCOUNT = JSON.stringify({ email: "abcdefghi@_relay.test", password: "s3cret-pass-word" });

/** A fake relay that registers one account and publishes its servers on 127.0.0.1. */
function fakeRelay(registerAnswer: string | { status: number; body: string } = ACCOUNT) {
  const f = fakeFetch({ [NEW]: registerAnswer, [AUTOCONFIG]: autoconfigXml("127.0.0.1") });
  const logins = fakeLogins(["127.0.0.1"]);
  const events: GatewayEvent[] = [];
  const deps: Partial<ProvisionDeps> = {
    fetch: f.fetch,
    verifyImap: logins.verifyImap,
    verifySmtp: logins.verifySmtp,
    clock: () => 1_700_000_000_000,
    events: { publish: (e) => events.push(e) },
  };
  return { deps, calls: f.calls, tried: logins.tried, events };
}

/** Runs `fn` with log lines captured. */
async function captureLogs<T>(fn: () => Promise<T>): Promise<{ out: T; lines: string[] }> {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    return { out: await fn(), lines };
  } finally {
    setLogSink(prev);
  }
}

Deno.test("provision() registers, discovers, verifies, creates a key; a restart reuses all of it offline", async () => {
  await using tmp = await makeTempDir("prov");
  const dataDir = `${tmp.path}/data`;
  const relay = fakeRelay();
  const { out: first, lines } = await captureLogs(() => provision(testConfig(dataDir), relay.deps));
  try {
    assert.equal(first.addr, "abcdefghi@_relay.test");
    assert.equal(first.displayName, "Gateway One");
    assert.equal(first.firstBoot, true);
    assert.match(first.fingerprint, /^[0-9A-F]{40}$/);
    assert.deepEqual(first.serverParams.imap, {
      host: "127.0.0.1",
      port: 993,
      security: "ssl",
      user: "abcdefghi@_relay.test",
    });
    assert.deepEqual(relay.calls, [`POST ${NEW}`, `GET ${AUTOCONFIG}`]);
    assert.deepEqual(relay.tried.sort(), ["IMAP 127.0.0.1:993/ssl", "SMTP 127.0.0.1:465/ssl"]);
    assert.equal(first.store.config.get(ConfigKey.CONFIGURED_AT), "1700000000");
    assert.deepEqual(Object.keys(first.timings), [
      "data directory",
      "accounts directory",
      "device fingerprint",
      "installation identity",
      "license",
      "relay registration",
      "mail autodiscovery",
      "encryption keys",
    ]);
    const progress = relay.events.filter((e) => e.kind === "ConfigureProgress");
    assert.equal(progress.at(-1)?.kind === "ConfigureProgress" && progress.at(-1)?.progress, 1000);
    for (let n = 1; n <= 6; n++) {
      assert.ok(lines.some((l) => l.includes(`step ${n}/7`)), `step ${n}`);
    }
    assert.ok(lines.every((l) => !l.includes("s3cret-pass-word")), "the password is never logged");
    assert.ok(lines.every((l) => !l.includes("PRIVATE KEY")), "the key is never logged");
  } finally {
    first.store.close();
    first.lock.release();
  }

  const again = fakeRelay();
  const second = await provision(testConfig(dataDir), again.deps);
  try {
    assert.deepEqual(again.calls, [], "a restart does no network work");
    assert.deepEqual(again.tried, [], "a restart does not re-verify logins");
    assert.deepEqual(again.events, [], "a restart is not a configure run");
    assert.equal(second.addr, first.addr);
    assert.equal(second.fingerprint, first.fingerprint);
    assert.equal(second.firstBoot, false);
  } finally {
    second.store.close();
    second.lock.release();
  }
});

Deno.test("provision() without EDGE_PROFILE on a first run fails naming it, before any network call", async () => {
  await using tmp = await makeTempDir("prov");
  const relay = fakeRelay();
  await assert.rejects(
    provision(testConfig(`${tmp.path}/d`, { EDGE_PROFILE: "" }), relay.deps),
    (e: Error) =>
      e instanceof StartupError &&
      /EDGE_PROFILE \(or PRIVITTY_PROFILE\) is required on first start/.test(e.message),
  );
  assert.deepEqual(relay.calls, []);
  // The lock was released and the directory is usable once the profile is set.
  const ok = await provision(testConfig(`${tmp.path}/d`), relay.deps);
  ok.store.close();
  ok.lock.release();
});

Deno.test("provision() keeps the account without EDGE_PROFILE on restart and follows a new one", async () => {
  await using tmp = await makeTempDir("prov");
  const dir = `${tmp.path}/d`;
  const first = await provision(testConfig(dir), fakeRelay().deps);
  first.store.close();
  first.lock.release();
  const unset = await provision(testConfig(dir, { EDGE_PROFILE: "" }), fakeRelay().deps);
  assert.equal(unset.displayName, "Gateway One");
  unset.store.close();
  unset.lock.release();
  const renamed = await provision(
    testConfig(dir, { EDGE_PROFILE: "Gateway Two" }),
    fakeRelay().deps,
  );
  assert.equal(renamed.displayName, "Gateway Two");
  assert.equal(renamed.addr, first.addr);
  renamed.store.close();
  renamed.lock.release();
});

Deno.test("provision() reports the relay's refusal reason and publishes ConfigureProgress 0", async () => {
  await using tmp = await makeTempDir("prov");
  const relay = fakeRelay({ status: 403, body: JSON.stringify({ reason: "registration closed" }) });
  await assert.rejects(
    provision(testConfig(`${tmp.path}/d`), relay.deps),
    (e: Error) =>
      e instanceof StartupError &&
      e.message === `Relay registration at ${NEW} was refused (HTTP 403): registration closed`,
  );
  const last = relay.events.at(-1);
  assert.ok(last?.kind === "ConfigureProgress" && last.progress === 0);
});

Deno.test("provision() after a failed autodiscovery keeps the account and retries discovery only", async () => {
  await using tmp = await makeTempDir("prov");
  const dir = `${tmp.path}/d`;
  const broken = fakeRelay();
  broken.deps = { ...broken.deps, verifyImap: () => Promise.reject(new Error("relay down")) };
  await assert.rejects(
    provision(testConfig(dir), { ...broken.deps, probeTimeoutMs: 200 }),
    /Autodiscovery found no working IMAP and SMTP server for abcdefghi@_relay\.test \(relay autoconfig: IMAP 127\.0\.0\.1:993\/ssl: relay down/,
  );
  const store = Store.open(`${dir}/accounts/1/gateway.db`);
  assert.equal(store.config.get(ConfigKey.ADDR), "abcdefghi@_relay.test");
  assert.equal(store.config.get(ConfigKey.SERVER_PARAMS), undefined);
  assert.equal(store.keys.current(), undefined);
  store.close();
  const retry = fakeRelay();
  const ok = await provision(testConfig(dir), retry.deps);
  assert.deepEqual(retry.calls, [`GET ${AUTOCONFIG}`], "no second registration");
  assert.equal(ok.firstBoot, false);
  ok.store.close();
  ok.lock.release();
});

Deno.test("provision() step 3 says why the license is not activated and starts anyway", async () => {
  await using tmp = await makeTempDir("prov");
  const dir = `${tmp.path}/d`;
  const cfg = testConfig(dir, {
    EDGE_LICENSE_URL: "https://license.example/v1/license/tok3n-s3cret",
  });
  const relay = fakeRelay(); // answers 404 to the license server's URL
  const { out, lines } = await captureLogs(() => provision(cfg, relay.deps));
  assert.equal(out.license.status(), "no_license");
  assert.equal(out.licenseRetryUrl, undefined, "a refusal is not retried");
  out.store.close();
  out.lock.release();
  assert.ok(relay.calls.includes("POST https://license.example/v1/license/tok3n-s3cret/activate"));
  assert.ok(
    lines.some((l) => l.includes("license activation refused; starting with status no_license")),
  );
  assert.ok(lines.every((l) => !l.includes("tok3n-s3cret")), "the delivery token is not logged");
  const licenseStep = lines.findIndex((l) => l.includes("step 3/7 license: done"));
  const relayStep = lines.findIndex((l) => l.includes("step 4/7 relay registration: done"));
  assert.ok(licenseStep >= 0 && licenseStep < relayStep, "step 3 before step 4");

  Deno.writeTextFileSync(`${dir}/privitty.lic`, "not a license");
  const again = await captureLogs(() => provision(testConfig(dir), fakeRelay().deps));
  assert.equal(again.out.license.status(), "invalid");
  again.out.store.close();
  again.out.lock.release();
  assert.ok(
    again.lines.some((l) =>
      l.includes("license file present; skipping activation (status invalid)")
    ),
  );
});

Deno.test("provision() refuses stored plaintext servers once plaintext is no longer allowed", async () => {
  await using tmp = await makeTempDir("prov");
  const dir = `${tmp.path}/d`;
  const relay = fakeRelay();
  const pages = fakeFetch({ [NEW]: ACCOUNT, [AUTOCONFIG]: autoconfigXml("127.0.0.1", "plain") });
  const plain = { ...relay.deps, fetch: pages.fetch };
  const cfg = testConfig(dir, { EDGE_ALLOW_PLAINTEXT_MAIL: "true" });
  const first = await provision(cfg, plain);
  assert.equal(first.serverParams.imap.security, "plain");
  first.store.close();
  first.lock.release();
  await assert.rejects(
    provision(testConfig(dir), fakeRelay().deps),
    /stored IMAP server 127\.0\.0\.1:143 has no TLS, and plaintext mail is not allowed/,
  );
});

Deno.test("provision() files are private: dirs 0700, files 0600", async () => {
  await using tmp = await makeTempDir("prov");
  const dir = `${tmp.path}/d`;
  const p = await provision(testConfig(dir), fakeRelay().deps);
  p.store.close();
  p.lock.release();
  const walk = (path: string) => {
    for (const e of Deno.readDirSync(path)) {
      const full = `${path}/${e.name}`;
      const mode = Deno.statSync(full).mode! & 0o777;
      assert.equal(mode, e.isDirectory ? 0o700 : 0o600, `${full} has mode ${mode.toString(8)}`);
      if (e.isDirectory) walk(full);
    }
  };
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  walk(dir);
});

Deno.test("provision() stores the device fingerprint before the license step (product-compat.md#start-order), as step 2b", async () => {
  await using tmp = await makeTempDir("prov");
  const dir = `${tmp.path}/d`;
  const sources = {
    interfaces: () => [{ name: "eth0", address: "10.0.0.2", mac: "02:fc:00:00:00:01" }],
    systemMachineIdPath: `${tmp.path}/no-machine-id`,
  };
  const relay = fakeRelay();
  const { out, lines } = await captureLogs(() =>
    provision(testConfig(dir), { ...relay.deps, fingerprintSources: sources })
  );
  try {
    assert.match(out.device.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(out.device.mac, "02:fc:00:00:00:01");
    assert.equal(out.device.change, "created");
    assert.equal(Deno.readTextFileSync(`${dir}/device-fingerprint`), out.device.fingerprint + "\n");
    assert.equal(Deno.statSync(`${dir}/device-fingerprint`).mode! & 0o777, 0o600);
    const at = (text: string) => lines.findIndex((l) => l.includes(text));
    assert.ok(at("step 2/7 accounts directory") >= 0);
    assert.ok(at("step 2b/7 device fingerprint: done") > at("step 2/7 accounts directory"));
    assert.ok(at("step 3/7 license") > at("step 2b/7 device fingerprint"));
  } finally {
    out.store.close();
    out.lock.release();
  }
});

Deno.test("provision() dates a new key by the relay's clock when ours runs ahead, a day back", async () => {
  await using tmp = await makeTempDir("prov");
  const relay = fakeRelay();
  const relayNow = 1_700_000_000_000;
  const fetchWithDate: typeof fetch = async (input, init) => {
    const res = await relay.deps.fetch!(input, init);
    if (String(input) !== NEW) return res;
    const headers = new Headers(res.headers);
    headers.set("date", new Date(relayNow).toUTCString());
    return new Response(await res.text(), { status: res.status, headers });
  };
  const ahead = { ...relay.deps, fetch: fetchWithDate, clock: () => relayNow + 10 * 86_400_000 };
  const out = await provision(testConfig(`${tmp.path}/data`), ahead);
  try {
    const key = await readPublicKey(out.store.keys.current()!.publicKey);
    assert.equal(key.getCreationTime().getTime(), relayNow - 86_400_000);
  } finally {
    out.store.close();
    out.lock.release();
  }
});
