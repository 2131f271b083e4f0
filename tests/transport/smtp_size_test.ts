/** Tests of the SMTP SIZE reading (RFC 1870): the EHLO parser, and a real relay's answer. */
import assert from "node:assert/strict";
import { probeSmtpSizeLimit, sizeLimitOfEhlo } from "../../src/transport/smtp_size.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";

Deno.test("sizeLimitOfEhlo reads SIZE n; SIZE alone, SIZE 0 or none is no limit", () => {
  const ehlo = (size: string) =>
    `250-relay.test\n250-PIPELINING\n${size}250-8BITMIME\n250 SMTPUTF8`;
  assert.equal(sizeLimitOfEhlo(ehlo("250-SIZE 31457280\n")), 31_457_280);
  assert.equal(sizeLimitOfEhlo("250-relay\r\n250 SIZE 1000"), 1000);
  assert.equal(sizeLimitOfEhlo("relay\nPIPELINING\nSIZE 2048\nAUTH PLAIN"), 2048);
  assert.equal(sizeLimitOfEhlo(ehlo("250-SIZE\n")), undefined);
  assert.equal(sizeLimitOfEhlo(ehlo("250-SIZE 0\n")), undefined);
  assert.equal(sizeLimitOfEhlo(ehlo("")), undefined);
  assert.equal(sizeLimitOfEhlo(ehlo("250-XSIZE 5\n")), undefined);
});

Deno.test({
  name: "probeSmtpSizeLimit reads the relay's message_size_limit over STARTTLS",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true, messageSizeLimit: 123_456 });
    const account = await relay.register();
    const limit = await probeSmtpSizeLimit({
      host: relay.host,
      port: relay.submissionPort,
      security: "starttls",
      user: account.email,
    }, account.password);
    assert.equal(limit, 123_456);
  },
});
