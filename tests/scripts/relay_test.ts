/**
 * Integration tests of the project's disposable relay (scripts/relay): registration and
 * autoconfig, IMAP and SMTP with verified TLS, the chatmail encryption filter, side-by-side
 * relays, and stopping/starting the mail daemons. Run through `deno task test`.
 */
import assert from "node:assert/strict";
import { ImapFlow } from "imapflow";
import nodemailer from "nodemailer";
import { NO_RELAY, type Relay, type RelayAccount, startRelay } from "../_helpers/relay.ts";
import {
  armorMessage,
  encryptedMail,
  encryptToFreshKey,
  plainMail,
  secureJoinRequest,
} from "./fixtures/mail.ts";

const FIXTURE = new URL("./fixtures/imap_login.ts", import.meta.url).pathname;

/** An imapflow client; it verifies TLS against Deno's root store, which holds DENO_CERT. */
function imap(relay: Relay, account: RelayAccount, mode: "tls" | "starttls"): ImapFlow {
  return new ImapFlow({
    host: relay.host,
    port: mode === "tls" ? relay.imapsPort : relay.imapPort,
    secure: mode === "tls",
    doSTARTTLS: mode === "starttls" ? true : undefined,
    auth: { user: account.email, pass: account.password },
    logger: false,
  });
}

/** Submits a raw mail over STARTTLS submission (or SMTPS); resolves to the server's reply. */
async function submit(
  relay: Relay,
  account: RelayAccount,
  envelope: { from: string; to: string[] },
  raw: string,
  port: "submission" | "smtps" = "submission",
): Promise<string> {
  const transport = nodemailer.createTransport({
    host: relay.host,
    port: port === "smtps" ? relay.smtpsPort : relay.submissionPort,
    secure: port === "smtps",
    requireTLS: true,
    auth: { user: account.email, pass: account.password },
    name: "tests.localhost",
  });
  try {
    const info = await transport.sendMail({ envelope, raw });
    return info.response;
  } catch (e) {
    const response = (e as { response?: string }).response;
    if (response) return response;
    throw e;
  } finally {
    transport.close();
  }
}

/** Waits until `account`'s INBOX holds `count` messages. */
async function waitForInbox(relay: Relay, account: RelayAccount, count: number): Promise<void> {
  const client = imap(relay, account, "tls");
  await client.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const status = await client.status("INBOX", { messages: true });
      if (status && status.messages === count) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`INBOX of ${account.email} did not reach ${count} messages`);
  } finally {
    await client.logout();
  }
}

/** Runs the imap_login fixture in a `deno run` subprocess with the given environment. */
async function loginInSubprocess(
  args: string[],
  env: { env?: Record<string, string>; clearEnv?: boolean },
): Promise<{ ok: boolean; error?: string; secure?: boolean }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-prompt", FIXTURE, ...args],
    ...env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const line = new TextDecoder().decode(out.stdout).trim().split("\n").pop() ?? "";
  assert.ok(
    line.startsWith("{"),
    `fixture printed no result: ${new TextDecoder().decode(out.stderr)}`,
  );
  return JSON.parse(line);
}

Deno.test({
  name: "relay: POST /new registers an account; autoconfig lists the TLS servers first",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    const account = await relay.register();
    assert.match(account.email, /^[a-z0-9]{9}@_relay\.test$/);
    assert.equal(account.password.length, 12);
    assert.ok(account.dclogin_url.startsWith(`dclogin:${account.email}?`));
    assert.equal((await fetch(relay.newUrl)).status, 405, "GET /new is refused");

    const xml = await (await fetch(relay.autoconfigUrl)).text();
    const entries = (kind: string) =>
      [...xml.matchAll(new RegExp(`<${kind} [^]*?<port>(\\d+)</port>\\s*<socketType>(\\w+)<`, "g"))]
        .map((m) => `${m[1]}/${m[2]}`);
    assert.deepEqual(entries("incomingServer").slice(0, 2), [
      `${relay.imapsPort}/SSL`,
      `${relay.imapPort}/STARTTLS`,
    ]);
    assert.deepEqual(entries("outgoingServer").slice(0, 2), [
      `${relay.smtpsPort}/SSL`,
      `${relay.submissionPort}/STARTTLS`,
    ]);
    assert.equal((await fetch(`${relay.httpOrigin}/health`)).status, 200);
  },
});

Deno.test({
  name: "relay: IMAP login over implicit TLS and STARTTLS verifies the certificate via DENO_CERT",
  ignore: NO_RELAY,
  async fn() {
    assert.ok(Deno.env.get("DENO_CERT"), "run through `deno task test`, which sets DENO_CERT");
    await using relay = await startRelay();
    const account = await relay.register();
    for (const mode of ["tls", "starttls"] as const) {
      const client = imap(relay, account, mode);
      await client.connect();
      assert.equal(client.secureConnection, true, `${mode}: the session is encrypted`);
      assert.ok(client.capabilities.has("XCHATMAIL"), "chatmail capability advertised");
      await client.logout();
    }
  },
});

Deno.test({
  name: "relay: DENO_CERT in a deno subprocess's env makes node:tls trust the relay",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    const a = await relay.register();
    const base = { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/root" };
    for (const [port, mode] of [[relay.imapsPort, "tls"], [relay.imapPort, "starttls"]]) {
      const args = [relay.host, String(port), String(mode), a.email, a.password];
      const trusted = await loginInSubprocess(args, {
        clearEnv: true,
        env: { ...base, ...relay.tlsEnv() },
      });
      assert.deepEqual(trusted.ok, true, `${mode} with DENO_CERT: ${trusted.error}`);
      const untrusted = await loginInSubprocess(args, { clearEnv: true, env: base });
      assert.equal(untrusted.ok, false, `${mode} without DENO_CERT must fail`);
      assert.match(untrusted.error ?? "", /self.signed|certificate|UnknownIssuer/i);
    }
    // the test process's own DENO_CERT (set by scripts/test.sh) is inherited as well
    const inherited = await loginInSubprocess(
      [relay.host, String(relay.imapsPort), "tls", a.email, a.password],
      {},
    );
    assert.equal(inherited.ok, true, `inherited env: ${inherited.error}`);
  },
});

Deno.test({
  name: "relay: the filter refuses plaintext (523), passes vc-request and encrypted mail",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    const [a, b] = [await relay.register(), await relay.register()];
    const envelope = { from: a.email, to: [b.email] };

    const refused = await submit(relay, a, envelope, plainMail(a.email, b.email));
    assert.equal(refused, "523 5.7.1 Encryption Needed: Invalid Unencrypted Mail");

    const join = await submit(relay, a, envelope, secureJoinRequest(a.email, b.email));
    assert.match(join, /^250 /);

    const armored = armorMessage(await encryptToFreshKey("hello, encrypted"));
    const sent = await submit(
      relay,
      a,
      envelope,
      encryptedMail(a.email, b.email, armored),
      "smtps",
    );
    assert.match(sent, /^250 /);
    await waitForInbox(relay, b, 2);

    const noChecksum = armorMessage(new Uint8Array([0xc1, 2, 0, 0, 0xd2, 1, 0]), {
      checksum: false,
    });
    const bad = await submit(relay, a, envelope, encryptedMail(a.email, b.email, noChecksum));
    assert.match(bad, /^523 /, "without the CRC line the base64 padding is cut off");
  },
});

Deno.test({
  name: "relay: MAIL FROM that differs from the From: header is refused with 500",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    const [a, b] = [await relay.register(), await relay.register()];
    const raw = secureJoinRequest(b.email, b.email);
    const reply = await submit(relay, a, { from: a.email, to: [b.email] }, raw);
    assert.match(reply, /^500 Invalid FROM/);
  },
});

Deno.test({
  name: "relay: two relays run side by side on distinct ports; --no-filter accepts plaintext",
  ignore: NO_RELAY,
  async fn() {
    await using one = await startRelay();
    await using two = await startRelay({ domain: "_relay2.test", filter: false });
    const ports = (r: Relay) => [
      r.imapPort,
      r.imapsPort,
      r.submissionPort,
      r.smtpsPort,
      r.mxPort,
      r.httpPort,
      r.httpsPort,
    ];
    const all = [...ports(one), ...ports(two)];
    assert.equal(new Set(all).size, all.length, `ports overlap: ${all}`);
    const [x, y] = [await one.register(), await two.register()];
    assert.ok(x.email.endsWith("@_relay.test") && y.email.endsWith("@_relay2.test"));
    const z = await two.register();
    const reply = await submit(
      two,
      y,
      { from: y.email, to: [z.email] },
      plainMail(y.email, z.email),
    );
    assert.match(reply, /^250 /);
    await waitForInbox(two, z, 1);
  },
});

Deno.test({
  name: "relay: stopping Postfix and Dovecot drops IMAP; starting them brings it back",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    const account = await relay.register();
    const client = imap(relay, account, "tls");
    await client.connect();
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));

    await relay.stopMail();
    assert.equal(relay.pids.dovecot, null);
    await closed;
    const refused = imap(relay, account, "tls");
    await assert.rejects(refused.connect());
    refused.close();

    await relay.startMail();
    assert.ok(relay.pids.dovecot && relay.pids.postfix);
    const again = imap(relay, account, "starttls");
    await again.connect();
    assert.equal(again.usable, true);
    await again.logout();
  },
});
