/**
 * TLS policy of the mail clients: options as built, and behaviour against loopback fake servers —
 * an untrusted certificate, a certificate for another name, and a server without STARTTLS are
 * all refused before any credential is sent.
 */
import assert from "node:assert/strict";
import { imapOptions, verifyImapLogin } from "../../src/transport/imap_client.ts";
import type { Endpoint } from "../../src/transport/server_params.ts";
import { SMTP_CLIENT_NAME, smtpOptions, verifySmtpLogin } from "../../src/transport/smtp_client.ts";
import { isIpAddress, tlsOptionsFor } from "../../src/transport/tls_options.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const ep = (security: Endpoint["security"], host = "mail.example.org"): Endpoint => ({
  host,
  port: 1,
  security,
  user: "a@example.org",
});

Deno.test("tlsOptionsFor() always verifies; SNI only for host names", () => {
  assert.deepEqual(tlsOptionsFor("mail.example.org"), {
    rejectUnauthorized: true,
    minVersion: "TLSv1.2",
    servername: "mail.example.org",
  });
  assert.deepEqual(tlsOptionsFor("127.0.0.1"), { rejectUnauthorized: true, minVersion: "TLSv1.2" });
  assert.ok(isIpAddress("::1") && isIpAddress("10.0.0.1") && !isIpAddress("localhost"));
});

Deno.test("imapOptions(): implicit TLS, mandatory STARTTLS, logger off, no auto-IDLE", () => {
  const ssl = imapOptions(ep("ssl"), "pw");
  assert.equal(ssl.secure, true);
  assert.equal(ssl.doSTARTTLS, undefined);
  assert.equal(ssl.servername, "mail.example.org");
  assert.equal(ssl.tls?.rejectUnauthorized, true);
  assert.equal(ssl.logger, false);
  assert.equal(ssl.disableAutoIdle, true);
  assert.ok(ssl.transport, "implicit TLS reads into slabs (slab_transport.ts)");
  const starttls = imapOptions(ep("starttls"), "pw");
  assert.equal(starttls.secure, false);
  assert.equal(starttls.doSTARTTLS, true);
  assert.equal(starttls.transport, undefined, "STARTTLS keeps imapflow's own socket");
  const plain = imapOptions(ep("plain"), "pw");
  assert.equal(plain.doSTARTTLS, false);
});

Deno.test("smtpOptions(): implicit TLS or required STARTTLS, fixed client name, verified TLS", () => {
  const ssl = smtpOptions(ep("ssl"), "pw");
  assert.deepEqual([ssl.secure, ssl.requireTLS, ssl.ignoreTLS], [true, false, false]);
  const starttls = smtpOptions(ep("starttls"), "pw");
  assert.deepEqual([starttls.secure, starttls.requireTLS, starttls.ignoreTLS], [
    false,
    true,
    false,
  ]);
  assert.equal(starttls.name, SMTP_CLIENT_NAME);
  assert.equal(starttls.tls.rejectUnauthorized, true);
  assert.equal(starttls.tls.servername, "mail.example.org");
});

/** A one-connection-at-a-time loopback server; records what clients sent. */
function fakeServer(
  listener: Deno.Listener,
  greet: string,
  answer: (line: string) => string | undefined,
) {
  const received: string[] = [];
  const done = (async () => {
    for await (const conn of listener) {
      try {
        await conn.write(new TextEncoder().encode(greet));
        const lines = conn.readable.pipeThrough(new TextDecoderStream());
        for await (const chunk of lines) {
          for (const line of chunk.split("\r\n").filter(Boolean)) {
            received.push(line);
            const reply = answer(line);
            if (reply) await conn.write(new TextEncoder().encode(reply));
          }
        }
      } catch { /* the client hung up or the handshake failed */ }
      try {
        conn.close();
      } catch { /* already closed */ }
    }
  })();
  return { received, done, close: () => listener.close() };
}

async function selfSignedCert(dir: string, san: string): Promise<{ cert: string; key: string }> {
  const out = await new Deno.Command("openssl", {
    args: ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
      .concat(["-days", "1", "-subj", "/CN=untrusted", "-addext", `subjectAltName=${san}`])
      .concat(["-keyout", `${dir}/key.pem`, "-out", `${dir}/cert.pem`]),
    stderr: "null",
  }).output();
  assert.ok(out.success, "openssl could not make a certificate");
  return {
    cert: Deno.readTextFileSync(`${dir}/cert.pem`),
    key: Deno.readTextFileSync(`${dir}/key.pem`),
  };
}

Deno.test("an untrusted server certificate fails IMAP and SMTP logins before the password is sent", async () => {
  await using tmp = await makeTempDir("tls");
  const { cert, key } = await selfSignedCert(tmp.path, "IP:127.0.0.1");
  const listener = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key });
  const s = fakeServer(listener, "* OK hi\r\n", () => undefined);
  const e = { ...ep("ssl", "127.0.0.1"), port: listener.addr.port };
  try {
    // Implicit-TLS IMAP runs over Deno.connectTls (rustls words), SMTP over node:tls.
    await assert.rejects(
      verifyImapLogin(e, "pw-secret"),
      /IMAP login failed: .*(self-signed|invalid peer certificate)/i,
    );
    await assert.rejects(verifySmtpLogin(e, "pw-secret"), /SMTP login failed: .*self-signed/i);
  } finally {
    s.close();
    await s.done;
  }
  assert.ok(s.received.every((l) => !l.includes("pw-secret")));
});

const TRUSTED_CERT = Deno.env.get("EDGE_TEST_TLS_CERT");
const TRUSTED_KEY = Deno.env.get("EDGE_TEST_TLS_KEY");

Deno.test({
  name: "a trusted certificate that does not name the host fails (host-name verification is on)",
  // scripts/test.sh trusts its test certificate through DENO_CERT; its SAN lists 127.0.0.1 only.
  ignore: !TRUSTED_CERT || !TRUSTED_KEY || Deno.env.get("DENO_CERT") !== TRUSTED_CERT,
  async fn() {
    const cert = Deno.readTextFileSync(TRUSTED_CERT!);
    const key = Deno.readTextFileSync(TRUSTED_KEY!);
    for (const [host, ok] of [["127.0.0.1", true], ["127.0.0.2", false]] as const) {
      const listener = Deno.listenTls({ hostname: host, port: 0, cert, key });
      const s = fakeServer(listener, "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] hi\r\n", imapAnswer);
      const e = { ...ep("ssl", host), port: listener.addr.port };
      try {
        const result = verifyImapLogin(e, "pw-secret");
        if (ok) await assert.rejects(result, /authentication failed/); // TLS was accepted
        else {
          await assert.rejects(
            result,
            /IMAP login failed: .*(altnames|does not match|not valid for name)/i,
          );
        }
      } finally {
        s.close();
        await s.done;
      }
    }
  },
});

/** Minimal IMAP answers: CAPABILITY without STARTTLS, LOGIN refused, LOGOUT. */
function imapAnswer(line: string): string | undefined {
  const [tag, cmd] = line.split(" ");
  switch (cmd?.toUpperCase()) {
    case "CAPABILITY":
      return `* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK done\r\n`;
    case "LOGIN":
    case "AUTHENTICATE":
      return `${tag} NO [AUTHENTICATIONFAILED] nope\r\n`;
    case "LOGOUT":
      return `* BYE\r\n${tag} OK bye\r\n`;
    default:
      return `${tag} BAD unknown\r\n`;
  }
}

Deno.test("STARTTLS endpoints refuse a server that does not offer STARTTLS (no plaintext fallback)", async () => {
  const imapListener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const imap = fakeServer(
    imapListener,
    "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] hi\r\n",
    imapAnswer,
  );
  const smtpListener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const smtp = fakeServer(smtpListener, "220 fake ESMTP\r\n", (line) => {
    if (/^(EHLO|HELO)/i.test(line)) return "250-fake\r\n250 AUTH PLAIN LOGIN\r\n";
    if (/^QUIT/i.test(line)) return "221 bye\r\n";
    return "502 no\r\n";
  });
  try {
    await assert.rejects(
      verifyImapLogin(
        { ...ep("starttls", "127.0.0.1"), port: imapListener.addr.port },
        "pw-secret",
      ),
      /IMAP login failed: .*STARTTLS/i,
    );
    await assert.rejects(
      verifySmtpLogin(
        { ...ep("starttls", "127.0.0.1"), port: smtpListener.addr.port },
        "pw-secret",
      ),
      /SMTP login failed: .*STARTTLS/i,
    );
  } finally {
    imap.close();
    smtp.close();
    await Promise.all([imap.done, smtp.done]);
  }
  for (const l of [...imap.received, ...smtp.received]) {
    assert.doesNotMatch(l, /LOGIN|AUTH|pw-secret|cHctc2VjcmV0/i, `sent in cleartext: ${l}`);
  }
  assert.ok(smtp.received.some((l) => l.startsWith("EHLO edge-gateway.localhost")));
});
