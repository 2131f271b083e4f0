/**
 * What the gateway puts on the wire passes a real relay: an encrypted, signed message in our
 * envelope is submitted over SMTPS through the chatmail acceptance filter, fetched by the
 * recipient over IMAPS (certificate verified), and decrypts to the same bytes, signature valid.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { dearmor } from "../../src/crypto/armor.ts";
import {
  decryptMessage,
  encryptAndSign,
  readPrivateKey,
  readPublicKey,
} from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { createImapClient } from "../../src/transport/imap_client.ts";
import { createSmtpTransport } from "../../src/transport/smtp_client.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";

Deno.test({
  name:
    "an encrypted message in our envelope crosses the filtered relay and decrypts at the recipient",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: true });
    const [alice, bob] = [await relay.register(), await relay.register()];
    const [ak, bk] = [await generateAccountKey(alice.email), await generateAccountKey(bob.email)];
    const inner = new TextEncoder().encode(
      `From: <${alice.email}>\r\nTo: <${bob.email}>\r\nChat-Version: 1.0\r\n\r\nhello ✓\r\n`,
    );
    const ciphertext = await encryptAndSign({
      plaintext: inner,
      recipients: [await readPublicKey(bk.publicKey)],
      signingKey: await readPrivateKey(ak.privateKey),
    });
    const raw = renderEncryptedEnvelope({
      from: alice.email,
      messageId: `<${crypto.randomUUID()}@localhost>`,
      date: new Date(),
      ciphertext,
      boundary: crypto.randomUUID(),
    });
    const smtp = createSmtpTransport({
      host: relay.host,
      port: relay.smtpsPort,
      security: "ssl",
      user: alice.email,
    }, alice.password);
    try {
      const info = await smtp.sendMail({
        envelope: { from: alice.email, to: [bob.email] },
        raw: Buffer.from(raw),
      }) as { response?: string };
      assert.match(String(info.response), /^250 /);
      await assert.rejects(
        smtp.sendMail({
          envelope: { from: alice.email, to: [bob.email] },
          raw: `From: <${alice.email}>\r\nSubject: hi\r\n\r\nplain\r\n`,
        }),
        /523/,
      );
    } finally {
      smtp.close();
    }

    const imap = createImapClient({
      host: relay.host,
      port: relay.imapsPort,
      security: "ssl",
      user: bob.email,
    }, bob.password);
    imap.on("error", () => {});
    await imap.connect();
    try {
      await imap.mailboxOpen("INBOX");
      let source: Uint8Array | undefined;
      for (let i = 0; i < 50 && !source; i++) {
        await imap.noop(); // imapflow answers from its cached EXISTS count until a command updates it
        const msg = await imap.fetchOne("*", { source: true }).catch(() => false);
        if (typeof msg === "object" && msg.source) source = new Uint8Array(msg.source);
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(source, "mail arrived");
      const text = new TextDecoder().decode(source);
      const d = await decryptMessage(
        dearmor(text.slice(text.indexOf("-----BEGIN PGP MESSAGE-----"))),
        await readPrivateKey(bk.privateKey),
      );
      assert.deepEqual(d.plaintext, inner);
      assert.deepEqual(await d.verify([await readPublicKey(ak.publicKey)]), {
        valid: true,
        signerFingerprint: ak.fingerprint,
      });
    } finally {
      await imap.logout().catch(() => imap.close());
    }
  },
});
