/** The short-lived certificate: a CA:FALSE leaf under .invalid, checked against its pin. */
import assert from "node:assert/strict";
import { checkPeerCertificate, createCertificate } from "../../../src/transport/p2p/certificate.ts";

const DAY = 24 * 3600_000;

Deno.test("a made certificate passes the peer check with its pin, name and validity", async () => {
  const now = Date.now();
  const c = await createCertificate(now, 13 * DAY);
  assert.match(c.serverName, /^[0-9a-f]{32}\.p2p\.invalid$/);
  assert.match(c.pin, /^[0-9a-f]{64}$/);
  const ok = checkPeerCertificate(c.certB64, c.pin, c.serverName, now, 14 * DAY);
  assert.equal(typeof ok, "object");
  assert.match((ok as { pem: string }).pem, /BEGIN CERTIFICATE/);
});

Deno.test("a wrong pin, another name, too long a validity or a wrong time are refused", async () => {
  const now = Date.now();
  const c = await createCertificate(now, 13 * DAY);
  const check = (o: Partial<{ b64: string; pin: string; name: string; at: number; max: number }>) =>
    checkPeerCertificate(
      o.b64 ?? c.certB64,
      o.pin ?? c.pin,
      o.name ?? c.serverName,
      o.at ?? now,
      o.max ?? 14 * DAY,
    );
  assert.equal(check({ pin: "0".repeat(64) }), "certificate does not match its pin");
  assert.equal(
    check({ name: "other.p2p.invalid" }),
    "certificate's SAN is not the advertised server name",
  );
  assert.equal(check({ max: 7 * DAY }), "certificate is valid for too long");
  assert.equal(check({ at: now + 20 * DAY }), "certificate is not valid now");
  assert.equal(check({ b64: "!!" }), "certificate is not base64url");
});
