/**
 * Forwarding a protected file (docs/prv-format.md, Forwarding) with three real accounts in
 * memory and one injected clock: Alice owns, Bob received it and forwards it to Carol, whom
 * Alice does not know. Carol's shares come from Alice alone, rules never loosen, Alice revokes
 * each independently, and forged or stale forwards are refused.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { blobPath } from "../../src/core/blobs.ts";
import { openAttachableFile } from "../../src/core/file_access.ts";
import { Messages } from "../../src/core/chats/messages.ts";
import { Header } from "../../src/protocol.ts";
import { Chats } from "../../src/core/chats/chats.ts";
import { blobDirOf } from "../../src/core/context.ts";
import { recipientOf } from "../../src/core/send/mail_composer.ts";
import { GatewayError } from "../../src/errors.ts";
import {
  type AccessRules,
  foldPdu,
  PDU_VERSION,
  PduType,
  signPdu,
} from "../../src/protected_files/pdu.ts";
import { signForward } from "../../src/protected_files/prv_forward.ts";
import { protectedFileSource } from "../../src/protected_files/viewer_source.ts";
import { AccessDeniedError } from "../../src/viewer/stream.ts";
import { introduce, mailBytes, type TestAccount, testAccount } from "../core/_accounts.ts";
import { RecordingSink } from "../core/_messaging.ts";
import { pngBytes } from "../viewer/_fixtures.ts";
import { protectAndSend, type PrvPair, prvPair, readAll, sendFile } from "./_pair.ts";

const FORWARDABLE: AccessRules = {
  allow_download: false,
  allow_forward: true,
  duration_minutes: 60,
};
const PNG = pngBytes(100_000);

interface Three extends AsyncDisposable {
  p: PrvPair;
  carol: TestAccount;
  /** Bob's chat with Carol and Carol's contact id on Bob. */
  bobCarolChat: number;
  carolOnBob: number;
}

async function three(p: PrvPair): Promise<Three> {
  const carol = await testAccount(
    "carol@relay.test",
    "Carol",
    blobDirOf(`${p.dir.path}/c-data`),
    3_600_000,
    () => p.clock.now,
  );
  const { bOnA: carolOnBob, aOnB: bobOnCarol } = introduce(p.bob, carol);
  const bobCarolChat = new Chats(p.bob.ctx).getOrCreate1to1(carolOnBob).chatId;
  new Chats(carol.ctx).getOrCreate1to1(bobOnCarol);
  return {
    p,
    carol,
    bobCarolChat,
    carolOnBob,
    [Symbol.asyncDispose]: async () => {
      await carol.receipts.close();
      carol.store.close();
    },
  };
}

/** Delivers every queued mail to the accounts it is addressed to, until none are left. */
async function route(...accounts: TestAccount[]): Promise<void> {
  for (;;) {
    const mails = accounts.flatMap((a) => a.outbox.splice(0));
    if (mails.length === 0) return;
    for (const m of mails) {
      for (const to of accounts) {
        if (m.recipients.includes(to.addr)) await to.receiver.receive(m.raw);
      }
    }
  }
}

/** Bob forwards his copy (message `bobMsg`) to Carol; returns Carol's message id. */
async function bobForwards(t: Three, bobMsg: number): Promise<number> {
  const blob = blobPath(t.p.bob.ctx.blobDir, t.p.bob.store.msgs.get(bobMsg)!.file);
  const sent = await sendFile(t.p.bob, t.bobCarolChat, blob, t.p.filesDir);
  const out = await t.carol.receiver.receive(sent.raw);
  if (out.kind !== "message") throw new Error(`not stored: ${JSON.stringify(out)}`);
  return out.msgId;
}

/**
 * Bob's modified gateway: sends his copy to Carol with `pdus` (encoded) instead of the forward
 * his honest gateway would sign; returns Carol's message id.
 */
async function bobSendsWith(t: Three, bobMsg: number, pdus: readonly string[]): Promise<number> {
  const { bob, filesDir } = t.p;
  const path = blobPath(bob.ctx.blobDir, bob.store.msgs.get(bobMsg)!.file);
  await using file = await openAttachableFile(
    path,
    { filesDir, dataDir: dirname(bob.ctx.blobDir), blobDir: bob.ctx.blobDir },
    { method: "send_msg", verb: "sent" },
  );
  const msgId = await new Messages(bob.ctx).createOutgoing(
    { chatId: t.bobCarolChat, file: { source: file } },
    {
      // Past every rule of ours: the PDUs are what a forged or foreign gateway would send.
      admit: () => Promise.resolve(),
      render: (draft, chat, recipients) =>
        bob.composer.renderChat(
          {
            ...draft,
            extraHeaders: pdus.map((p): [string, string] => [Header.EDGE_PRV_PDU, foldPdu(p)]),
          },
          chat,
          recipients,
        ),
    },
  );
  const row = bob.store.outbox.due(Number.MAX_SAFE_INTEGER).find((r) => r.msgId === msgId)!;
  const out = await t.carol.receiver.receive(await mailBytes(bob, row));
  if (out.kind !== "message") throw new Error(`not stored: ${JSON.stringify(out)}`);
  return out.msgId;
}

/** Carol opens her copy as /stream does. */
function carolOpens(t: Three, msgId: number) {
  return protectedFileSource(t.carol.protectedFiles, new RecordingSink())(msgId);
}

/**
 * Carol sends Alice a request carrying `forward` (encoded) in a hidden PDU mail, as her gateway
 * does; Alice's contact on Carol is created when missing.
 */
async function carolAsksWith(t: Three, fileUid: string, forward: string): Promise<void> {
  const { alice } = t.p;
  const carol = t.carol;
  const known = carol.store.contacts.byFingerprint(alice.self.fingerprint);
  const aliceOnCarol = known?.id ?? carol.store.contacts.insert({
    addr: alice.addr,
    authName: "Alice",
    fingerprint: alice.self.fingerprint,
    publicKey: alice.self.publicKey,
  });
  const request = await signPdu({
    v: PDU_VERSION,
    file_uid: fileUid,
    issued_at: Math.floor(t.p.clock.now / 1000),
    type: PduType.REQUEST,
    requester: carol.self.fingerprint,
    reason: "open",
    request_id: "f".repeat(32),
    received_at: Math.floor(t.p.clock.now / 1000),
    forward,
  }, carol.self.privateKey);
  const mail = await carol.composer.renderPdus(
    recipientOf(carol.store.contacts.get(aliceOnCarol)!),
    [foldPdu(request.encoded)],
  );
  await alice.receiver.receive(mail.raw);
}

/** Asserts that Alice refused Carol: no recipient row, no contact, nothing sent. */
function assertRefused(t: Three, fileId: number): void {
  const { alice } = t.p;
  const rows = alice.store.protectedFiles.accessList(fileId);
  assert.ok(
    !rows.some((a) => a.fingerprint === t.carol.self.fingerprint),
    "Carol is no recipient",
  );
  assert.equal(alice.store.contacts.byFingerprint(t.carol.self.fingerprint), undefined);
  assert.equal(alice.outbox.length, 0, "no grant, no otk_pdu");
}

Deno.test("forward allowed: Carol asks the owner, who adds her with her own S1 and grants", async () => {
  await using p = await prvPair();
  await using t = await three(p);
  const { result, bobMsg } = await protectAndSend(p, PNG, FORWARDABLE);
  const carolMsg = await bobForwards(t, bobMsg);

  // The forward carried no key share: Carol holds nothing and knows Alice now.
  const rec = t.carol.store.protectedFiles.receivedByMsg(carolMsg)!;
  assert.ok(rec.s1.every((b) => b === 0), "no S1 from the forwarder");
  const aliceOnCarol = t.carol.store.contacts.byFingerprint(p.alice.self.fingerprint)!;
  assert.equal(rec.ownerContactId, aliceOnCarol.id, "the owner is Alice, not Bob");
  assert.equal(aliceOnCarol.addr, p.alice.addr);
  const before = t.carol.protectedFiles.status(carolMsg);
  assert.equal(before.state, "requested");
  assert.match(before.reason, /forwarded to this gateway: its key share comes from the owner/);
  assert.deepEqual(
    [before.allow_download, before.allow_forward, before.duration_minutes, before.file_name],
    [false, true, 60, "report.bin"],
  );

  // The first open asks Alice (not Bob); Alice adds Carol and answers.
  await assert.rejects(
    () => carolOpens(t, carolMsg),
    (e: Error) => e instanceof AccessDeniedError && e.state === "requested",
  );
  assert.equal(t.carol.outbox.length, 1);
  assert.deepEqual(t.carol.outbox[0].recipients, [p.alice.addr]);
  p.alice.sink.take();
  await route(p.alice, p.bob, t.carol);

  const carolOnAlice = p.alice.store.contacts.byFingerprint(t.carol.self.fingerprint)!.id;
  assert.ok(
    p.alice.sink.events.some((e) =>
      e.kind === "PrivittyFileAccessChanged" && e.fileId === result.file_id &&
      e.chatId === p.aliceChat
    ),
  );
  const aliceMsg = p.alice.store.msgs.stampsOfChat(p.aliceChat, false).at(-1)!.id;
  assert.deepEqual(p.alice.protectedFiles.status(aliceMsg).recipients, [
    { contact_id: p.bobOnAlice, state: "active", forwarded_by: 0 },
    { contact_id: carolOnAlice, state: "active", forwarded_by: p.bobOnAlice },
  ]);
  const rows = p.alice.store.protectedFiles.accessList(result.file_id);
  assert.notDeepEqual(rows[0].s1, rows[1].s1, "Carol's S1 is her own, split by the owner");

  assert.equal(t.carol.protectedFiles.status(carolMsg).state, "active");
  const opened = (await carolOpens(t, carolMsg))!;
  assert.equal(opened.allowDownload, false);
  assert.deepEqual(await readAll(opened.plaintext), PNG);

  // Carol's window is her own: 60 minutes from her receipt, enforced by Alice's grant too.
  p.clock.now += 61 * 60_000;
  assert.equal(t.carol.protectedFiles.status(carolMsg).state, "expired");
});

Deno.test("rules never loosen: a forward with looser rules is refused by Carol and by Alice", async () => {
  await using p = await prvPair();
  await using t = await three(p);
  const { result, bobMsg } = await protectAndSend(p, PNG, FORWARDABLE);
  const bobRec = p.bob.store.protectedFiles.receivedByMsg(bobMsg)!;
  const aliceOnBob = p.bob.store.contacts.get(bobRec.ownerContactId)!;
  const forge = (rules: AccessRules) =>
    signForward({
      fileUid: bobRec.fileUid,
      filePdu: bobRec.filePdu,
      owner: aliceOnBob,
      forwarder: p.bob.self.fingerprint,
      recipient: t.carol.self.fingerprint,
      rules,
      now: Math.floor(p.clock.now / 1000),
    }, p.bob.self.privateKey);
  for (
    const looser of [
      { ...FORWARDABLE, allow_download: true },
      { ...FORWARDABLE, duration_minutes: 0 },
      { ...FORWARDABLE, duration_minutes: 61 },
    ]
  ) {
    await carolAsksWith(t, bobRec.fileUid, (await forge(looser)).encoded);
    assertRefused(t, result.file_id);
  }
  // Stricter is fine: Alice adds Carol with the stricter window.
  await carolAsksWith(
    t,
    bobRec.fileUid,
    (await forge({ ...FORWARDABLE, duration_minutes: 5 })).encoded,
  );
  const carolOnAlice = p.alice.store.contacts.byFingerprint(t.carol.self.fingerprint)!.id;
  const row = p.alice.store.protectedFiles.accessOf(result.file_id, carolOnAlice)!;
  assert.equal(JSON.parse(row.rules).duration_minutes, 5);
  assert.ok(row.windowEnd > 0 && row.windowEnd - row.windowStart === 5 * 60);

  // Carol's own gateway refuses a .prv that rides with a looser forward: no key information.
  const looser = await forge({ ...FORWARDABLE, allow_download: true });
  const carolMsg = await bobSendsWith(t, bobMsg, [looser.encoded]);
  assert.equal(t.carol.store.protectedFiles.receivedByMsg(carolMsg), undefined);
  assert.throws(() => t.carol.protectedFiles.status(carolMsg), /not_found/);
});

Deno.test("Alice revokes Carol: Carol is revoked, Bob keeps access", async () => {
  await using p = await prvPair();
  await using t = await three(p);
  const { result, bobMsg } = await protectAndSend(p, PNG, FORWARDABLE);
  const carolMsg = await bobForwards(t, bobMsg);
  await assert.rejects(() => carolOpens(t, carolMsg), AccessDeniedError);
  await route(p.alice, p.bob, t.carol);
  assert.equal(t.carol.protectedFiles.status(carolMsg).state, "active");

  const carolOnAlice = p.alice.store.contacts.byFingerprint(t.carol.self.fingerprint)!.id;
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, carolOnAlice);
  await route(p.alice, p.bob, t.carol);
  assert.equal(t.carol.protectedFiles.status(carolMsg).state, "revoked");
  assert.ok(t.carol.store.protectedFiles.receivedByMsg(carolMsg)!.s1.every((b) => b === 0));
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "active");
  // Asking again with the same forward gets the revoke again, never a grant.
  const rec = t.carol.store.protectedFiles.receivedByMsg(carolMsg)!;
  await carolAsksWith(t, rec.fileUid, rec.forwardPdu);
  assert.equal(
    p.alice.store.protectedFiles.accessOf(result.file_id, carolOnAlice)!.state,
    "revoked",
  );
  assert.equal(p.alice.outbox.length, 1);
  await route(p.alice, t.carol);
  assert.equal(t.carol.protectedFiles.status(carolMsg).state, "revoked");
});

Deno.test("Alice revokes Bob: Bob cannot forward, and his earlier forward is refused", async () => {
  await using p = await prvPair();
  await using t = await three(p);
  const { result, bobMsg } = await protectAndSend(p, PNG, FORWARDABLE);
  // Bob forwarded before the revoke; Carol has not opened it yet.
  const carolMsg = await bobForwards(t, bobMsg);
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await route(p.alice, p.bob);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "revoked");

  const blob = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(bobMsg)!.file);
  await assert.rejects(
    () => sendFile(p.bob, t.bobCarolChat, blob, p.filesDir),
    (e: Error) =>
      e instanceof GatewayError && /may not be forwarded: access to it is revoked/.test(e.message),
  );

  await assert.rejects(() => carolOpens(t, carolMsg), AccessDeniedError);
  assert.equal(t.carol.outbox.length, 1, "Carol asked");
  await route(p.alice, p.bob, t.carol);
  assertRefused(t, result.file_id);
  assert.equal(t.carol.protectedFiles.status(carolMsg).state, "requested");
});

Deno.test("forged forwards are refused by Alice: not signed by a recipient, or allow_forward=false", async () => {
  await using p = await prvPair();
  await using t = await three(p);
  const { result, bobMsg } = await protectAndSend(p, PNG, FORWARDABLE);
  const bobRec = p.bob.store.protectedFiles.receivedByMsg(bobMsg)!;
  const aliceOnBob = p.bob.store.contacts.get(bobRec.ownerContactId)!;
  const input = {
    fileUid: bobRec.fileUid,
    filePdu: bobRec.filePdu,
    owner: aliceOnBob,
    recipient: t.carol.self.fingerprint,
    rules: FORWARDABLE,
    now: Math.floor(p.clock.now / 1000),
  };
  // Carol signs a forward to herself (she is no recipient).
  const self = await signForward(
    { ...input, forwarder: t.carol.self.fingerprint },
    t.carol.self.privateKey,
  );
  await carolAsksWith(t, bobRec.fileUid, self.encoded);
  assertRefused(t, result.file_id);
  // Carol claims Bob forwarded it, but signs it herself.
  const claimed = await signForward(
    { ...input, forwarder: p.bob.self.fingerprint },
    t.carol.self.privateKey,
  );
  await carolAsksWith(t, bobRec.fileUid, claimed.encoded);
  assertRefused(t, result.file_id);

  // A file whose owner set allow_forward=false: Bob's gateway refuses, and a forward his key
  // signs anyway is refused by Carol's gateway and by Alice.
  const locked = await protectAndSend(
    p,
    PNG,
    { ...FORWARDABLE, allow_forward: false },
    "locked.bin",
  );
  const lockedRec = p.bob.store.protectedFiles.receivedByMsg(locked.bobMsg)!;
  const lockedBlob = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(locked.bobMsg)!.file);
  await assert.rejects(
    () => sendFile(p.bob, t.bobCarolChat, lockedBlob, p.filesDir),
    /allow_forward=false/,
  );
  const forged = await signForward({
    ...input,
    fileUid: lockedRec.fileUid,
    filePdu: lockedRec.filePdu,
    forwarder: p.bob.self.fingerprint,
  }, p.bob.self.privateKey);
  await carolAsksWith(t, lockedRec.fileUid, forged.encoded);
  assertRefused(t, locked.result.file_id);
  assert.equal(t.carol.outbox.length, 0);
});

Deno.test("a chain: Carol forwards on to Dave, a contact of Alice's; Dave's grant comes from Alice", async () => {
  await using p = await prvPair();
  await using t = await three(p);
  const { result, bobMsg } = await protectAndSend(p, PNG, FORWARDABLE);
  const carolMsg = await bobForwards(t, bobMsg);
  await assert.rejects(() => carolOpens(t, carolMsg), AccessDeniedError);
  await route(p.alice, p.bob, t.carol);

  const dave = await testAccount(
    "dave@relay.test",
    "Dave",
    blobDirOf(`${p.dir.path}/d-data`),
    3_600_000,
    () => p.clock.now,
  );
  const { bOnA: daveOnAlice } = introduce(p.alice, dave);
  const { bOnA: daveOnCarol } = introduce(t.carol, dave);
  const carolDaveChat = new Chats(t.carol.ctx).getOrCreate1to1(daveOnCarol).chatId;
  const blob = blobPath(t.carol.ctx.blobDir, t.carol.store.msgs.get(carolMsg)!.file);
  const sent = await sendFile(t.carol, carolDaveChat, blob, p.filesDir);
  const out = await dave.receiver.receive(sent.raw);
  assert.ok(out.kind === "message");
  await assert.rejects(
    () => protectedFileSource(dave.protectedFiles, new RecordingSink())(out.msgId),
    AccessDeniedError,
  );
  await route(p.alice, p.bob, t.carol, dave);
  const carolOnAlice = p.alice.store.contacts.byFingerprint(t.carol.self.fingerprint)!.id;
  const daveRow = p.alice.store.protectedFiles.accessOf(result.file_id, daveOnAlice)!;
  assert.equal(daveRow.forwardedBy, carolOnAlice);
  const opened = await protectedFileSource(dave.protectedFiles, new RecordingSink())(out.msgId);
  assert.deepEqual(await readAll(opened!.plaintext), PNG);
  await dave.receipts.close();
  dave.store.close();
});
