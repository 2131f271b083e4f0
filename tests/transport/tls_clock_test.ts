/**
 * Recognising TLS failures caused by the clock, with the words Deno's rustls and node:tls really
 * say for an expired and a not yet valid certificate (tests/fixtures/tls_clock), and the probe.
 */
import assert from "node:assert/strict";
import * as tls from "node:tls";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import { setLogSink } from "../../src/log.ts";
import { ImapLoop } from "../../src/transport/imap_loop.ts";
import { SmtpLoop } from "../../src/transport/smtp_loop.ts";
import {
  isUnverifiedCertificate,
  tlsClockDetail,
  TlsClockFault,
  tlsClockFault,
} from "../../src/transport/tls_clock.ts";
import { probeTlsClock } from "../../src/transport/tls_clock_probe.ts";

const FIXTURES = new URL("../fixtures/tls_clock/", import.meta.url);

/** A TLS server on 127.0.0.1 with a fixture certificate that only does the handshake. */
function tlsServer(name: "expired" | "not_yet_valid") {
  const listener = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: Deno.readTextFileSync(new URL(`${name}.pem`, FIXTURES)),
    key: Deno.readTextFileSync(new URL(`${name}.key`, FIXTURES)),
  });
  const done = (async () => {
    for await (const conn of listener) {
      await conn.handshake().catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  return {
    port: listener.addr.port,
    endpoint: {
      host: "127.0.0.1",
      port: listener.addr.port,
      security: "ssl" as const,
      user: "a@x.test",
    },
    async close() {
      listener.close();
      await done;
    },
  };
}

async function rustlsError(port: number): Promise<unknown> {
  try {
    const conn = await Deno.connectTls({ hostname: "127.0.0.1", port });
    await conn.handshake();
    conn.close();
  } catch (err) {
    return err;
  }
  throw new Error("the handshake worked");
}

function nodeTlsError(port: number): Promise<Error> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: true });
    socket.on("secureConnect", () => {
      socket.destroy();
      reject(new Error("the handshake worked"));
    });
    socket.on("error", resolve);
  });
}

for (
  const [name, fault] of [
    ["expired", TlsClockFault.EXPIRED],
    ["not_yet_valid", TlsClockFault.NOT_YET_VALID],
  ] as const
) {
  Deno.test(`tlsClockFault() names a certificate that is ${name} in rustls's real words`, async () => {
    const server = tlsServer(name);
    try {
      const err = await rustlsError(server.port);
      assert.equal(tlsClockFault(err), fault, String(err));
      // imapflow and our own wrappers keep it as the cause.
      assert.equal(tlsClockFault(new Error("IMAP login failed", { cause: err })), fault);
      // node:tls (nodemailer) says only that it could not verify: the probe asks rustls.
      const nodeErr = await nodeTlsError(server.port);
      assert.equal(tlsClockFault(nodeErr), undefined, nodeErr.message);
      assert.ok(isUnverifiedCertificate(nodeErr), nodeErr.message);
      assert.equal(await probeTlsClock(server.endpoint), fault);
    } finally {
      await server.close();
    }
  });
}

Deno.test("tlsClockFault() knows older and newer rustls forms and ignores other failures", () => {
  const cases: [string, TlsClockFault | undefined][] = [
    ["invalid peer certificate: Expired", "expired"],
    ["invalid peer certificate: NotValidYet", "not_yet_valid"],
    [
      "invalid peer certificate: ExpiredContext { time: UnixTime(1), not_after: UnixTime(0) }",
      "expired",
    ],
    [
      "invalid peer certificate: NotValidYetContext { time: UnixTime(0), not_before: UnixTime(1) }",
      "not_yet_valid",
    ],
    ["InvalidCertificate(Expired)", "expired"],
    ["certificate has expired", "expired"],
    ["certificate is not yet valid", "not_yet_valid"],
    ["invalid peer certificate: UnknownIssuer", undefined],
    ["invalid peer certificate: ExpiredRevocationList", undefined],
    ["self-signed certificate", undefined],
    ["authentication failed (NO [EXPIRED] Password Expired)", undefined],
    ["connect ECONNREFUSED 127.0.0.1:993", undefined],
  ];
  for (const [message, fault] of cases) {
    assert.equal(tlsClockFault(new Error(message)), fault, message);
  }
  assert.equal(
    tlsClockFault(Object.assign(new Error("x"), { code: "CERT_HAS_EXPIRED" })),
    "expired",
  );
  assert.equal(tlsClockFault(undefined), undefined);
  assert.ok(!isUnverifiedCertificate(new Error("self-signed certificate")));
});

Deno.test("tlsClockDetail() names the device's time and the clock", () => {
  assert.equal(
    tlsClockDetail(TlsClockFault.EXPIRED, Date.UTC(2028, 0, 2)),
    "the relay's TLS certificate is expired at this device's clock (2028-01-02T00:00:00.000Z): " +
      "check the system clock",
  );
});

Deno.test("probeTlsClock() skips STARTTLS endpoints and gives no answer for other failures", async () => {
  const endpoint = { host: "127.0.0.1", port: 1, security: "ssl" as const, user: "a@x.test" };
  let connects = 0;
  const refused = () => (connects++, Promise.reject(new Error("connection refused")));
  assert.equal(await probeTlsClock({ ...endpoint, security: "starttls" }, refused), undefined);
  assert.equal(connects, 0);
  assert.equal(await probeTlsClock(endpoint, refused), undefined);
  const silent = () => Promise.resolve({ handshake: () => new Promise(() => {}), close() {} });
  assert.equal(await probeTlsClock(endpoint, silent, 10), undefined, "no answer: no fault");
  const ok = () => Promise.resolve({ handshake: () => Promise.resolve(), close() {} });
  assert.equal(await probeTlsClock(endpoint, ok), undefined);
});

Deno.test("ImapLoop reports an expired certificate as tls_clock and keeps reconnecting", async () => {
  const server = tlsServer("expired");
  const connectivity = new ConnectivityMonitor({ publish: () => {} }, 1000);
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const loop = new ImapLoop({
    params: { imap: server.endpoint, smtp: server.endpoint },
    password: "pw",
    connectivity,
    events: { publish: () => {} },
    problems: connectivity,
    backoff: { min: 20, max: 40 },
  });
  const ac = new AbortController();
  try {
    loop.start(ac.signal);
    const end = Date.now() + 10_000;
    while (lines.filter((l) => l.includes("reconnecting")).length < 3 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    ac.abort();
    await loop.stop();
    setLogSink(prev);
    await server.close();
  }
  assert.ok(lines.filter((l) => l.includes("reconnecting")).length >= 3, "it keeps retrying");
  assert.equal(connectivity.mailProblem()?.error, "tls_clock");
  assert.match(connectivity.mailProblem()!.detail, /expired at this device's clock/);
  const warns = lines.filter((l) => / WARN .*at this device's clock/.test(l));
  assert.equal(warns.length, 1, "one WARN naming the clock, not one per attempt");
});

Deno.test("SmtpLoop over node:tls reports a not yet valid certificate as tls_clock and retries", async () => {
  const server = tlsServer("not_yet_valid");
  const connectivity = new ConnectivityMonitor({ publish: () => {} }, 1000);
  const row = { id: 1, envelopeFrom: "a@x.test", recipients: ["b@x.test"], attempts: 0 };
  const retries: boolean[] = [];
  let gaveUp = false;
  const queue = {
    due: () => gaveUp ? [] : [{ ...row, raw: new TextEncoder().encode("Subject: x\r\n\r\n") }],
    nextDueAt: () => 0,
    pullBack: () => 0,
    sent: () => assert.fail("sent through a certificate that is not valid yet"),
    retry: (_id: number, _error: string, _at: number, counted: boolean) => retries.push(counted),
    gaveUp: () => void (gaveUp = true),
  };
  const prev = setLogSink(() => {});
  const loop = new SmtpLoop({
    endpoint: server.endpoint,
    password: "pw",
    queue,
    problems: connectivity,
    connectionBackoff: { min: 20, max: 40 },
  });
  const ac = new AbortController();
  try {
    loop.start(ac.signal);
    const end = Date.now() + 15_000;
    while ((retries.length < 2 || !connectivity.mailProblem()) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    ac.abort();
    await loop.stop();
    setLogSink(prev);
    await server.close();
  }
  assert.ok(retries.length >= 2, "retried after the pause");
  assert.ok(retries.every((counted) => !counted), "never counted toward giving up");
  assert.equal(gaveUp, false);
  assert.equal(connectivity.mailProblem()?.error, "tls_clock");
  assert.match(connectivity.mailProblem()!.detail, /not yet valid at this device's clock/);
});
