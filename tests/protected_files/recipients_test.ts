/**
 * The key distribution for N recipients (docs/prv-format.md, Split key and Transport), with a
 * group-shaped chat of Alice's whose members are Bob and Carol: the file_pdu rides in the chat
 * mail, each recipient's otk_pdu and first grant in a mail encrypted to it alone (in either
 * order); every recipient has its own S1, and revoking one leaves the other's access.
 */
import assert from "node:assert/strict";
import { ChatType } from "../../src/constants.ts";
import { DiskFullError } from "../../src/errors.ts";
import { blobDirOf } from "../../src/core/context.ts";
import type { RenderedMail } from "../../src/core/chats/messages.ts";
import { introduce, testAccount } from "../core/_accounts.ts";
import { pngBytes } from "../viewer/_fixtures.ts";
import { plainFile, type PrvPair, prvPair, readAll, sendFile } from "./_pair.ts";
import { protectedFileSource } from "../../src/protected_files/viewer_source.ts";
import { RecordingSink } from "../core/_messaging.ts";
import type { TestAccount } from "../core/_accounts.ts";

const RULES = { allow_download: true, allow_forward: false, duration_minutes: 0 };
const BYTES = pngBytes(100_000);

/** Mails in `outbox` that `to` can decrypt go to it (the others are skipped). */
async function deliverMine(
  outbox: readonly Pick<RenderedMail, "recipients" | "raw">[],
  to: TestAccount,
): Promise<void> {
  for (const m of outbox) {
    if (m.recipients.includes(to.addr)) await to.receiver.receive(m.raw);
  }
}

async function withCarol(p: PrvPair) {
  const carol = await testAccount(
    "carol@relay.test",
    "Carol",
    blobDirOf(`${p.dir.path}/c-data`),
    3_600_000,
    () => p.clock.now,
  );
  const { bOnA: carolOnAlice } = introduce(p.alice, carol);
  const group = p.alice.store.chats.insert({ type: ChatType.GROUP, name: "Plans", grpid: "g1" });
  p.alice.store.chats.addMember(group, 1);
  p.alice.store.chats.addMember(group, p.bobOnAlice);
  p.alice.store.chats.addMember(group, carolOnAlice);
  return { carol, carolOnAlice, group };
}

Deno.test("N recipients: own S1 each, PDUs 1:1 in either order, revoking one keeps the other", async () => {
  await using p = await prvPair();
  const { carol, carolOnAlice, group } = await withCarol(p);
  try {
    const path = await plainFile(p, "plan.png", BYTES);
    const r = await p.alice.protectedFiles.protect({
      chatId: group,
      plaintextPath: path,
      rules: RULES,
      roots: { filesDir: p.filesDir, dataDir: `${p.dir.path}/a-data` },
      method: "secure_send_group_file",
    });
    const access = p.alice.store.protectedFiles.accessList(r.file_id);
    assert.deepEqual(access.map((a) => a.contactId).sort(), [p.bobOnAlice, carolOnAlice].sort());
    assert.notDeepEqual(access[0].s1, access[1].s1, "a share per recipient");
    const sent = await sendFile(p.alice, group, r.encrypted_path, p.filesDir);
    const chatMail = new TextDecoder().decode(sent.raw);
    assert.ok(chatMail.length > 0);
    // Queued in the same commit as the chat mail, right after it.
    const rows = p.alice.store.outbox.due(Number.MAX_SAFE_INTEGER);
    const chatRow = rows.find((r) => r.msgId === sent.msgId)!;
    const separate = rows.filter((r) => r.msgId === 0 && r.id > chatRow.id);
    assert.equal(separate.length, 2, "one hidden mail per recipient");
    assert.deepEqual(separate.map((m) => m.recipients.length), [1, 1]);

    // Bob: his own PDUs first, then the chat mail. Carol: the other way round.
    await deliverMine(separate, p.bob);
    const bobOut = await p.bob.receiver.receive(sent.raw);
    const carolOut = await carol.receiver.receive(sent.raw);
    assert.ok(bobOut.kind === "message" && carolOut.kind === "message");
    assert.equal(carol.protectedFiles.status(carolOut.msgId).state, "requested");
    assert.match(carol.protectedFiles.status(carolOut.msgId).reason, /otk_pdu\) has not arrived/);
    await deliverMine(separate, carol);
    for (const [who, msgId] of [[p.bob, bobOut.msgId], [carol, carolOut.msgId]] as const) {
      assert.equal(who.protectedFiles.status(msgId).state, "active", who.addr);
      const open = protectedFileSource(who.protectedFiles, new RecordingSink());
      assert.deepEqual(await readAll((await open(msgId))!.plaintext), BYTES, who.addr);
    }

    await p.alice.protectedFiles.owner.revoke(group, r.file_id, p.bobOnAlice);
    await deliverMine(p.alice.outbox.splice(0), p.bob);
    assert.equal(p.bob.protectedFiles.status(bobOut.msgId).state, "revoked");
    assert.equal(carol.protectedFiles.status(carolOut.msgId).state, "active");
  } finally {
    await carol.receipts.close();
    carol.store.close();
  }
});

Deno.test("a group send whose separate PDU mails cannot be queued (a full disk) stores nothing", async () => {
  await using p = await prvPair();
  const { carol, group } = await withCarol(p);
  try {
    const path = await plainFile(p, "plan.png", BYTES);
    const r = await p.alice.protectedFiles.protect({
      chatId: group,
      plaintextPath: path,
      rules: RULES,
      roots: { filesDir: p.filesDir, dataDir: `${p.dir.path}/a-data` },
      method: "secure_send_group_file",
    });
    const outbox = p.alice.store.outbox;
    const enqueue = outbox.enqueue.bind(outbox);
    let calls = 0;
    outbox.enqueue = (row) => {
      if (++calls === 2) throw new DiskFullError("database or disk is full"); // a separate mail
      return enqueue(row);
    };
    await assert.rejects(
      () => sendFile(p.alice, group, r.encrypted_path, p.filesDir),
      DiskFullError,
    );
    assert.equal(calls, 2);
    assert.deepEqual(
      outbox.due(Number.MAX_SAFE_INTEGER),
      [],
      "neither the chat mail nor a PDU mail",
    );
    assert.equal(p.alice.store.msgs.lastOfChat(group), undefined, "no message");
    const blobs = [...Deno.readDirSync(p.alice.ctx.blobDir)].map((e) => e.name);
    assert.deepEqual(blobs.filter((n) => n.endsWith(".prv")), [], "the blob copy is removed");

    outbox.enqueue = enqueue;
    const sent = await sendFile(p.alice, group, r.encrypted_path, p.filesDir);
    const rows = outbox.due(Number.MAX_SAFE_INTEGER);
    assert.equal(rows.filter((x) => x.msgId === sent.msgId).length, 1);
    assert.equal(rows.filter((x) => x.msgId === 0).length, 2);
  } finally {
    await carol.receipts.close();
    carol.store.close();
  }
});
