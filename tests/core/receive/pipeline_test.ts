/** Tests of the reception pipeline with real keys: chat messages, receipts and bad mail. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { Chats } from "../../../src/core/chats/chats.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { Messages, type RenderedMail } from "../../../src/core/chats/messages.ts";
import { RetryableMailError } from "../../../src/core/receive/mail_reader.ts";
import { ReceiptBatcher } from "../../../src/core/send/receipt_batcher.ts";
import { encryptAndSign } from "../../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../../src/mime/encrypted_envelope.ts";
import { renderChatMessage } from "../../../src/mime/factory.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import { introduce, type TestAccount, testAccount } from "../_accounts.ts";
import { attach } from "../_messaging.ts";

async function pair(blobDir?: string) {
  const a = await testAccount("alice@relay.test", "Alice", blobDir);
  const b = await testAccount("bob@relay.test", "Bob", blobDir);
  const ids = introduce(a, b);
  const aChat = new Chats(a.ctx).getOrCreate1to1(ids.bOnA).chatId;
  return { a, b, ...ids, aChat };
}

/** Sends through `send_msg`'s path and returns the message id and the queued mail's bytes. */
async function send(from: TestAccount, chatId: number, text: string, file?: string) {
  await using source = file === undefined ? undefined : await attach(file);
  const msgId = await new Messages(from.ctx).createOutgoing(
    { chatId, text, file: source && { source } },
    from.send,
  );
  const row = from.store.outbox.due(Date.now()).find((r) => r.msgId === msgId)!;
  new MessageStates(from.ctx).outboxSent(row.id);
  return { msgId, raw: row.raw };
}

Deno.test("receive() stores a chat message once, in the sender's 1:1 chat, with IncomingMsg", async () => {
  const { a, b, aOnB, aChat } = await pair();
  const { raw } = await send(a, aChat, "Hello Bob ✓\nline 2");
  b.sink.take();
  const first = await b.receiver.receive(raw);
  assert.equal(first.kind, "message");
  const msgId = (first as { msgId: number }).msgId;
  const m = b.store.msgs.get(msgId)!;
  const chat = b.store.chats.singleByContact(aOnB)!;
  assert.deepEqual([m.text, m.fromId, m.chatId, m.state, m.mdnRequested], [
    "Hello Bob ✓\nline 2",
    aOnB,
    chat.id,
    1,
    true,
  ]);
  assert.equal(m.fromFingerprint, a.self.fingerprint);
  assert.ok(
    b.sink.take().some((e) => e.kind === "IncomingMsg" && e.msgId === msgId),
    "IncomingMsg after the commit",
  );
  assert.deepEqual(await b.receiver.receive(raw), { kind: "duplicate" });
  assert.deepEqual(b.sink.take(), [], "a duplicate changes nothing and emits nothing");
});

Deno.test("receive() creates the key-contact from the Autocrypt key inside the encrypted part", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const bOnA = a.store.contacts.insert({
    addr: b.addr,
    fingerprint: b.self.fingerprint,
    publicKey: b.self.publicKey,
  });
  const chat = new Chats(a.ctx).getOrCreate1to1(bOnA).chatId;
  const { raw } = await send(a, chat, "first contact");
  const out = await b.receiver.receive(raw);
  assert.equal(out.kind, "message");
  const contact = b.store.contacts.byFingerprint(a.self.fingerprint)!;
  assert.deepEqual([contact.addr, contact.authName, contact.verified], [a.addr, "Alice", false]);
  assert.deepEqual(contact.publicKey, a.self.publicKey);
});

Deno.test("receive() stores a file as a blob with name, MIME type and exact bytes", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    const bytes = crypto.getRandomValues(new Uint8Array(4096));
    await Deno.writeFile(`${dir}/report.pdf`, bytes);
    const { raw } = await send(a, aChat, "see attachment", `${dir}/report.pdf`);
    const out = await b.receiver.receive(raw) as { msgId: number };
    const m = b.store.msgs.get(out.msgId)!;
    assert.deepEqual([m.text, m.fileName, m.fileMime, m.fileBytes, m.viewtype], [
      "see attachment",
      "report.pdf",
      "application/pdf",
      4096,
      "File",
    ]);
    assert.deepEqual(await Deno.readFile(`${dir}/blobs/${m.file}`), bytes);
  });
});

Deno.test("read and delivery receipts move our message to 26 and 28 with events", async () => {
  const { a, b, aChat } = await pair();
  const { msgId, raw } = await send(a, aChat, "please read");
  assert.equal(a.store.msgs.get(msgId)!.state, 20);
  const got = await b.receiver.receive(raw) as { msgId: number };
  await b.receipts.flush();
  assert.equal(b.outbox.length, 1, "the gateway asked for a delivery receipt: one is queued");
  a.sink.take();
  assert.deepEqual(await a.receiver.receive(b.outbox.shift()!.raw), {
    kind: "receipt",
    changed: 1,
  });
  assert.equal(a.store.msgs.get(msgId)!.state, 26);
  assert.deepEqual(a.sink.take(), [{ kind: "MsgDelivered", chatId: aChat, msgId }]);

  const seen = new MessageStates(b.ctx).markSeen([got.msgId]);
  for (const m of seen) b.receipts.add(m.fromId, m.rfc724Mid, "displayed");
  await b.receipts.flush();
  await a.receiver.receive(b.outbox.shift()!.raw);
  assert.equal(a.store.msgs.get(msgId)!.state, 28);
  assert.deepEqual(a.sink.take(), [{ kind: "MsgRead", chatId: aChat, msgId }]);
});

Deno.test("receipts are batched: one mail per peer for a burst of messages", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob", undefined, 60_000);
  const aChat = new Chats(a.ctx).getOrCreate1to1(introduce(a, b).bOnA).chatId;
  const sent = [];
  for (let i = 0; i < 5; i++) sent.push(await send(a, aChat, `m${i}`));
  for (const s of sent) await b.receiver.receive(s.raw);
  await b.receipts.flush();
  assert.equal(b.outbox.length, 1);
  await a.receiver.receive(b.outbox.shift()!.raw);
  assert.deepEqual(sent.map((s) => a.store.msgs.get(s.msgId)!.state), [26, 26, 26, 26, 26]);
});

Deno.test("a receipt from a peer who is not in the message's chat changes nothing", async () => {
  const { a, b, aChat } = await pair();
  const carol = await testAccount("carol@relay.test", "Carol");
  introduce(a, carol);
  const { msgId, raw } = await send(a, aChat, "for Bob only");
  await b.receiver.receive(raw);
  const mid = a.store.msgs.get(msgId)!.rfc724Mid;
  const carolOnA = a.store.contacts.byFingerprint(carol.self.fingerprint)!;
  const bobOnCarol = carol.store.contacts.byFingerprint(a.self.fingerprint)!;
  assert.ok(carolOnA && bobOnCarol);
  carol.receipts.add(bobOnCarol.id, mid, "displayed");
  await carol.receipts.flush();
  assert.deepEqual(await a.receiver.receive(carol.outbox.shift()!.raw), {
    kind: "receipt",
    changed: 0,
  });
  assert.equal(a.store.msgs.get(msgId)!.state, 20);
});

/** `mime` without its Autocrypt header (and the header's folded lines). */
function withoutAutocrypt(mime: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(mime);
  const end = text.indexOf("\r\n\r\n");
  const head = text.slice(0, end).split("\r\n");
  const kept: string[] = [];
  let dropping = false;
  for (const line of head) {
    if (/^[ \t]/.test(line) && dropping) continue;
    dropping = /^autocrypt:/i.test(line);
    if (!dropping) kept.push(line);
  }
  return new TextEncoder().encode(kept.join("\r\n") + text.slice(end));
}

/**
 * An encrypted chat message to `to`, signed by `sender` when `sign`; its Autocrypt header names
 * `autocrypt` (the sender's own key by default), or there is none when `autocrypt` is false.
 */
async function forged(
  sender: TestAccount,
  to: TestAccount,
  o: { sign: boolean; fromAddr?: string; autocrypt?: Uint8Array | false },
): Promise<Uint8Array> {
  const rendered = renderChatMessage({
    from: { addr: o.fromAddr ?? sender.addr },
    to: [{ addr: to.addr }],
    messageId: `<${crypto.randomUUID()}@relay.test>`,
    date: new Date(),
    subject: "x",
    autocryptKey: o.autocrypt || sender.self.publicKey,
    text: "forged",
  });
  const inner = o.autocrypt === false ? withoutAutocrypt(rendered) : rendered;
  const recipient = await openpgp.readKey({ binaryKey: to.self.publicKey });
  const ciphertext = o.sign
    ? await encryptAndSign({
      plaintext: inner,
      recipients: [recipient],
      signingKey: sender.self.privateKey,
    })
    : await openpgp.encrypt({
      message: await openpgp.createMessage({ binary: inner }),
      encryptionKeys: [recipient],
      format: "binary",
    }) as Uint8Array;
  return renderEncryptedEnvelope({
    from: o.fromAddr ?? sender.addr,
    messageId: `<${crypto.randomUUID()}@relay.test>`,
    date: new Date(),
    ciphertext,
    boundary: "b",
  });
}

Deno.test("bad mail is recorded with a reason and never stored as a message", async () => {
  const { a, b } = await pair();
  const mallory = await testAccount("mallory@relay.test", "Mallory");
  const cases: [string, Uint8Array, RegExp][] = [
    ["broken MIME", new TextEncoder().encode("garbage without headers"), /Message-ID|From/],
    [
      "plaintext",
      new TextEncoder().encode(
        "From: alice@relay.test\r\nMessage-ID: <p1@x>\r\nSubject: hi\r\n\r\nplain text\r\n",
      ),
      /unencrypted/,
    ],
    [
      "bad armor",
      new TextEncoder().encode(
        'From: <alice@relay.test>\r\nMessage-ID: <p2@x>\r\nContent-Type: multipart/encrypted; boundary="b"\r\n\r\n' +
          "--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b\r\n" +
          "Content-Type: application/octet-stream\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\n!!!!\r\n-----END PGP MESSAGE-----\r\n--b--\r\n",
      ),
      /armor|decrypt/,
    ],
    ["unsigned, claiming Alice", await forged(a, b, { sign: false }), /not signed/],
    ["not encrypted to us", await forged(a, mallory, { sign: true }), /decrypt/],
    [
      "signed, but From is not an address",
      await forged(mallory, b, { sign: true, fromAddr: "no-domain" }),
      /address/,
    ],
  ];
  for (const [name, raw, reason] of cases) {
    const out = await b.receiver.receive(raw);
    assert.equal(out.kind, "rejected", name);
    assert.match((out as { reason: string }).reason, reason, name);
  }
  assert.equal(b.store.receiveErrors.count(), cases.length);
  const broken = new TextEncoder().encode(
    'Message-ID: <broken@x>\r\nContent-Type: multipart/mixed; boundary="nope"\r\n\r\nbody\r\n',
  );
  assert.equal((await b.receiver.receive(broken)).kind, "rejected");
  assert.equal(b.store.receiveErrors.list(1)[0].messageId, "broken@x", "kept for tracing");
  assert.deepEqual(b.store.msgs.freshIds(), []);
  assert.ok(b.sink.take().filter((e) => e.kind === "Warning").length >= cases.length);
  const verified = b.store.contacts.list(true).filter((c) => c.verified);
  assert.deepEqual(verified, []);
});

Deno.test("a mail signed by a key we do not have, naming none, is left to retry: nothing recorded", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const raw = await forged(a, b, { sign: true, autocrypt: false });
  b.sink.take();
  await assert.rejects(
    b.receiver.receive(raw),
    (err) =>
      err instanceof RetryableMailError &&
      /not signed by a key of alice@relay\.test/.test(err.message) &&
      err.messageId !== "",
  );
  assert.equal(b.store.receiveErrors.count(), 0, "not recorded: the mail stays on the server");
  assert.equal(b.store.countMessages(), 0);
  assert.equal(b.store.contacts.byFingerprint(a.self.fingerprint), undefined);
  assert.deepEqual(b.sink.take(), [], "no event");
  // The reason may pass: once the key is known (as after a SecureJoin), the same mail is taken.
  introduce(a, b);
  assert.equal((await b.receiver.receive(raw)).kind, "message");
});

Deno.test("a mail signed by another key than its Autocrypt header names is rejected for good", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const mallory = await testAccount("mallory@relay.test", "Mallory");
  const raw = await forged(mallory, b, {
    sign: true,
    fromAddr: a.addr,
    autocrypt: a.self.publicKey,
  });
  const out = await b.receiver.receive(raw);
  assert.equal(out.kind, "rejected");
  assert.match((out as { reason: string }).reason, /^not signed by a key of alice@relay\.test \(/);
  const [rec] = b.store.receiveErrors.list();
  assert.equal(b.store.receiveErrors.count(), 1, "recorded, so the drain deletes it");
  assert.match(rec.reason, /not signed by a key of alice@relay\.test/);
  assert.equal(b.store.countMessages(), 0);
  assert.equal(b.store.contacts.byFingerprint(a.self.fingerprint), undefined);
  assert.equal(b.store.contacts.byFingerprint(mallory.self.fingerprint), undefined);
});

Deno.test("an unsigned encrypted mail is rejected for good and recorded", async () => {
  const { a, b } = await pair();
  const out = await b.receiver.receive(await forged(a, b, { sign: false }));
  assert.equal(out.kind, "rejected");
  assert.match(
    (out as { reason: string }).reason,
    /^not signed by a key of alice@relay\.test \(no signature\)$/,
  );
  assert.equal(b.store.receiveErrors.count(), 1);
  assert.equal(b.store.countMessages(), 0);
});

Deno.test("a compressed message that inflates past the limit is refused (zip bomb)", async () => {
  const { b } = await pair();
  const recipient = await openpgp.readKey({ binaryKey: b.self.publicKey });
  const inner = new Uint8Array(80 * 1024 * 1024); // zeros: ~80 KiB compressed
  const ciphertext = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: inner }),
    encryptionKeys: [recipient],
    format: "binary",
    config: { preferredCompressionAlgorithm: openpgp.enums.compression.zlib },
  }) as Uint8Array;
  assert.ok(ciphertext.length < 1024 * 1024);
  const raw = renderEncryptedEnvelope({
    from: "alice@relay.test",
    messageId: "<bomb@x>",
    date: new Date(),
    ciphertext,
    boundary: "b",
  });
  const out = await b.receiver.receive(raw);
  assert.equal(out.kind, "rejected");
});

Deno.test("a new key for a known address is a new, unverified contact: peers are fingerprints", async () => {
  const { a, b, aOnB } = await pair();
  b.store.contacts.setVerified(aOnB, 1);
  const mallory = await testAccount("mallory@relay.test", "Mallory");
  const out = await b.receiver.receive(await forged(mallory, b, { sign: true, fromAddr: a.addr }));
  const m = b.store.msgs.get((out as { msgId: number }).msgId)!;
  assert.notEqual(m.fromId, aOnB);
  const impostor = b.store.contacts.get(m.fromId)!;
  assert.deepEqual([impostor.fingerprint, impostor.verified], [mallory.self.fingerprint, false]);
  assert.notEqual(m.chatId, b.store.chats.singleByContact(aOnB)?.id);
  assert.equal(b.store.contacts.get(aOnB)!.verified, true);
  assert.deepEqual(b.store.contacts.get(aOnB)!.publicKey, a.self.publicKey);
});

Deno.test("an owed delivery receipt is stored with the message and sent after a restart", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob", undefined, 60_000);
  const aChat = new Chats(a.ctx).getOrCreate1to1(introduce(a, b).bOnA).chatId;
  const { msgId, raw } = await send(a, aChat, "crash after this");
  await b.receiver.receive(raw);
  assert.equal(b.store.owedReceipts.count(), 1, "committed together with the message");
  assert.equal(b.outbox.length, 0);
  // "Restart": a new batcher over the same store sends what is owed, once.
  const queued: RenderedMail[] = [];
  const restarted = new ReceiptBatcher(b.ctx, b.composer, (m) => queued.push(m), 0);
  await restarted.close();
  await b.receipts.close();
  assert.equal(queued.length, 1);
  assert.equal(b.outbox.length, 0, "the old batcher found nothing left to send");
  assert.equal(b.store.owedReceipts.count(), 0);
  await a.receiver.receive(queued[0].raw);
  assert.equal(a.store.msgs.get(msgId)!.state, 26);
});
