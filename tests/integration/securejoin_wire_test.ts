/**
 * Wire-level interop proof with the real Delta Chat core: the gateway's own modules (invite,
 * MIME factory and parser, Autocrypt headers, OpenPGP, armor, envelope, SMTP/IMAP clients) play
 * the SecureJoin inviter, step by step, for a Delta Chat peer joining through the filtered relay.
 * The daemon's state machine will drive the same steps; this test pins the wire format first.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { dearmor } from "../../src/crypto/armor.ts";
import { parseAutocrypt } from "../../src/crypto/autocrypt_header.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import {
  decryptMessage,
  encryptAndSign,
  fingerprintOf,
  readPrivateKey,
  readPublicKey,
} from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { renderChatMessage, renderSecureJoinStep } from "../../src/mime/factory.ts";
import { parseMime } from "../../src/mime/parser.ts";
import { newToken } from "../../src/crypto/random.ts";
import { formatInvite } from "../../src/securejoin/invite.ts";
import { createImapClient } from "../../src/transport/imap_client.ts";
import { createSmtpTransport } from "../../src/transport/smtp_client.ts";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";

/** Waits for the next new message in INBOX and returns its raw bytes (then deletes it). */
async function nextMail(relay: Relay, user: string, password: string): Promise<Uint8Array> {
  const imap = createImapClient(
    { host: relay.host, port: relay.imapsPort, security: "ssl", user },
    password,
  );
  imap.on("error", () => {});
  await imap.connect();
  try {
    await imap.mailboxOpen("INBOX");
    for (let i = 0; i < 150; i++) {
      await imap.noop(); // imapflow answers from its cached EXISTS count until a command updates it
      const msg = await imap.fetchOne("1", { source: true, uid: true }).catch(() => false);
      if (typeof msg === "object" && msg.source) {
        await imap.messageDelete(String(msg.uid), { uid: true });
        return new Uint8Array(msg.source);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("no mail within 15 s");
  } finally {
    await imap.logout().catch(() => imap.close());
  }
}

Deno.test({
  name:
    "a real Delta Chat core joins an invite served by the gateway's wire modules and reads our text",
  ignore: NO_RELAY || !deltaChatInstalled(),
  async fn() {
    await using relay = await startRelay({ filter: true });
    const me = await relay.register();
    const key = await generateAccountKey(me.email);
    const priv = await readPrivateKey(key.privateKey);
    await using bob = await DeltaChatPeer.start("bob", relay);
    const [inviteNumber, auth] = [newToken(), newToken()];
    const smtp = createSmtpTransport({
      host: relay.host,
      port: relay.smtpsPort,
      security: "ssl",
      user: me.email,
    }, me.password);
    const send = async (
      to: string,
      inner: Uint8Array,
      peerKey: Awaited<ReturnType<typeof readPublicKey>>,
    ) => {
      const ciphertext = await encryptAndSign({
        plaintext: inner,
        recipients: [peerKey],
        signingKey: priv,
      });
      const raw = renderEncryptedEnvelope({
        from: me.email,
        messageId: `<${crypto.randomUUID()}@localhost>`,
        date: new Date(),
        ciphertext,
        boundary: crypto.randomUUID(),
      });
      await smtp.sendMail({ envelope: { from: me.email, to: [to] }, raw: Buffer.from(raw) });
    };
    const common = (bobKeydata: Uint8Array, subject: string) => ({
      from: { addr: me.email, name: "Edge Gateway" },
      to: [{ addr: bob.addr }],
      messageId: `<${crypto.randomUUID()}@localhost>`,
      date: new Date(),
      subject,
      autocryptKey: key.publicKey,
      gossip: [{ addr: bob.addr, keydata: bobKeydata }],
    });
    try {
      const link = formatInvite({
        fingerprint: key.fingerprint,
        addr: me.email,
        name: "Edge Gateway",
        inviteNumber,
        auth,
      });
      const chatOnBob = await bob.call<number>("secure_join", bob.accountId, link);

      // Step 1: Bob's plaintext vc-request with his key.
      const req = parseMime(await nextMail(relay, me.email, me.password));
      assert.equal(req.headers.get("secure-join"), "vc-request");
      assert.equal(req.headers.get("secure-join-invitenumber"), inviteNumber);
      const bobAc = parseAutocrypt(req.headers.get("autocrypt")!)!;
      const bobKey = await readPublicKey(bobAc.keydata);

      // Step 2: vc-auth-required, encrypted to Bob + self, signed, with gossip of Bob's key.
      await send(
        bob.addr,
        renderSecureJoinStep({ ...common(bobAc.keydata, "Secure-Join"), step: "vc-auth-required" }),
        bobKey,
      );
      await bob.waitForEvent(
        (e) => e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 400,
        30_000,
      );

      // Step 3: Bob's vc-request-with-auth: decrypt, verify the signer, check auth and fingerprint.
      const outer = new TextDecoder().decode(await nextMail(relay, me.email, me.password));
      const d = await decryptMessage(
        dearmor(outer.slice(outer.indexOf("-----BEGIN PGP MESSAGE-----"))),
        priv,
      );
      const inner = parseMime(d.plaintext);
      assert.equal(inner.headers.get("secure-join"), "vc-request-with-auth");
      assert.equal(inner.headers.get("secure-join-auth"), auth);
      assert.equal(inner.headers.get("secure-join-fingerprint"), fingerprintOf(bobKey));
      assert.deepEqual(await d.verify([bobKey]), {
        valid: true,
        signerFingerprint: fingerprintOf(bobKey),
      });

      // Step 4: vc-contact-confirm → Bob reaches 1000, then our chat text lands in that chat.
      await send(
        bob.addr,
        renderSecureJoinStep({
          ...common(bobAc.keydata, "Secure-Join"),
          step: "vc-contact-confirm",
        }),
        bobKey,
      );
      await bob.waitForEvent(
        (e) => e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 1000,
        30_000,
      );
      const from = bob.events.length;
      await send(
        bob.addr,
        renderChatMessage({
          ...common(bobAc.keydata, "Message from Edge Gateway"),
          gossip: [],
          text: "Hello from the gateway ✓",
        }),
        bobKey,
      );
      const incoming = await bob.waitForEvent((e) => e.event.kind === "IncomingMsg", 30_000, from);
      const msg = await bob.call<{ text: string; chatId: number; showPadlock: boolean }>(
        "get_message",
        bob.accountId,
        incoming.event.msgId,
      );
      assert.deepEqual([msg.text, msg.chatId, msg.showPadlock], [
        "Hello from the gateway ✓",
        chatOnBob,
        true,
      ]);
    } catch (err) {
      console.error(bob.warnings().join("\n"));
      for (const f of ["postfix.log", "filter.log"]) {
        console.error(
          await Deno.readTextFile(`${relay.dir}/log/${f}`).then(
            (t) => t.slice(-4000),
            () => `(no ${f})`,
          ),
        );
      }
      throw err;
    } finally {
      smtp.close();
    }
  },
});
