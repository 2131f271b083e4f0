/**
 * Protected-file access between two real accounts in memory (issue 11 §2): key shares, the PDUs
 * in the chat mail, grants held in memory, revoke, expiry on an injected clock, renewal, forward
 * rules, restart and an owner that does not answer (a store on another host: identity_test.ts).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { blobPath } from "../../src/core/blobs.ts";
import { Messages } from "../../src/core/chats/messages.ts";
import { FileAccessDeniedError } from "../../src/protected_files/service.ts";
import { protectedFileSource } from "../../src/protected_files/viewer_source.ts";
import { AccessDeniedError, DecryptError } from "../../src/viewer/stream.ts";
import { GatewayError } from "../../src/errors.ts";
import { RecordingSink } from "../core/_messaging.ts";
import { pngBytes } from "../viewer/_fixtures.ts";
import {
  exchange,
  plainFile,
  protect,
  protectAndSend,
  type PrvPair,
  prvPair,
  readAll,
  restartBob,
  sendFile,
} from "./_pair.ts";

const RULES = { allow_download: false, allow_forward: false, duration_minutes: 0 };
/** A PNG-looking file longer than two 64 KiB chunks. */
const PNG = pngBytes(150_000);

/** Bob's viewer source (what /stream uses). */
function bobViewer(p: PrvPair) {
  const sink = new RecordingSink();
  return { open: protectedFileSource(p.bob.protectedFiles, sink), sink };
}

function bobState(p: PrvPair, msgId: number): string {
  return p.bob.protectedFiles.status(msgId).state;
}

Deno.test("secure_send_file writes <path>.prv and the result contract §2 names, exactly", async () => {
  await using p = await prvPair();
  const path = await plainFile(p, "report.csv", new TextEncoder().encode("a,b\n1,2\n"));
  const r = await protect(p, path, RULES);
  assert.deepEqual(Object.keys(r).sort(), [
    "encrypted_path",
    "file_id",
    "file_pdu_b64",
    "otk_pdu_b64",
    "plaintext_hash",
    "prv_file_hash",
  ]);
  assert.equal(r.encrypted_path, `${path}.prv`);
  const prv = await Deno.readFile(r.encrypted_path);
  const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
  assert.equal(r.prv_file_hash, sha(prv));
  assert.equal(r.plaintext_hash, sha(new TextEncoder().encode("a,b\n1,2\n")));
  assert.ok(Number.isInteger(r.file_id) && r.file_id > 0);
  assert.equal(p.alice.protectedFiles.fileIdByPath(r.encrypted_path), r.file_id);
  // Each is one base64 string of the whole PDU (its header form, `base64(json).base64(sig)`).
  const unwrap = (b64: string) => {
    assert.match(b64, /^[A-Za-z0-9+/]+={0,2}$/);
    return JSON.parse(atob(atob(b64).split(".")[0]));
  };
  const filePdu = unwrap(r.file_pdu_b64);
  assert.equal(filePdu.type, "file_pdu");
  assert.equal(filePdu.name, "report.csv");
  assert.deepEqual(filePdu.rules, RULES);
  assert.equal(filePdu.owner, p.alice.self.fingerprint);
  assert.equal(unwrap(r.otk_pdu_b64).recipient, p.bob.self.fingerprint);
});

Deno.test("a file outside the files directory is refused and nothing is written", async () => {
  await using p = await prvPair();
  const outside = `${p.dir.path}/outside.txt`;
  await Deno.writeTextFile(outside, "x");
  await assert.rejects(
    () => protect(p, outside, RULES),
    (e: Error) => e instanceof GatewayError && /not inside the files directory/.test(e.message),
  );
  await assert.rejects(() => Deno.stat(`${outside}.prv`), Deno.errors.NotFound);
  await assert.rejects(
    () => protect(p, `${p.filesDir}/missing.txt`, RULES),
    (e: Error) => e instanceof GatewayError && /does not exist|not found/i.test(e.message),
  );
});

Deno.test("A → B: B opens the .prv with the first grant, type from magic bytes, ranges", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  assert.equal(bobState(p, bobMsg), "active");
  const v = bobViewer(p);
  const file = (await v.open(bobMsg))!;
  assert.equal(file.mime, "image/png");
  assert.equal(file.size, PNG.length);
  assert.equal(file.allowDownload, false);
  assert.deepEqual(await readAll(file.plaintext), PNG);
  const mid = (await v.open(bobMsg))!;
  assert.deepEqual(await readAll(mid.slice!(65_530, 70_000)), PNG.slice(65_530, 70_000));
  await mid.plaintext.cancel();
  assert.deepEqual(v.sink.events.map((e) => e.kind), [
    "PrivittyFileDecrypted",
    "PrivittyFileDecrypted",
  ]);
  // Bob resolves the path get_messages shows him; Alice both of hers.
  const bobBlob = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(bobMsg)!.file);
  assert.ok(p.bob.protectedFiles.fileIdByPath(bobBlob) > 0);
  const aliceBlob = blobPath(p.alice.ctx.blobDir, p.alice.store.msgs.get(aliceMsg)!.file);
  assert.equal(p.alice.protectedFiles.fileIdByPath(aliceBlob), result.file_id);
  // The owner streams its own sent file too.
  const own = protectedFileSource(p.alice.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await own(aliceMsg))!.plaintext), PNG);
});

Deno.test("revoke: B's next open is 403 revoked, a running stream ends, S1 is gone", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  assert.deepEqual(p.alice.sink.take().filter((e) => e.kind.startsWith("Privitty")), [{
    kind: "PrivittyFileEncrypted",
    chatId: p.aliceChat,
    msgId: aliceMsg,
  }], "the send announced the protected file");
  const v = bobViewer(p);
  const running = (await v.open(bobMsg))!;
  const reader = running.plaintext.getReader();
  assert.ok(!(await reader.read()).done, "the stream runs");
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  assert.deepEqual(p.alice.sink.take().filter((e) => e.kind.startsWith("Privitty")), [{
    kind: "PrivittyFileAccessRevoked",
    chatId: p.aliceChat,
    contactId: p.bobOnAlice,
    fileId: result.file_id,
  }]);
  await exchange(p);
  await assert.rejects(async () => {
    for (;;) if ((await reader.read()).done) break;
  }, /revoked/);
  assert.equal(bobState(p, bobMsg), "revoked");
  await assert.rejects(() => v.open(bobMsg), (e: Error) => {
    return e instanceof AccessDeniedError && e.state === "revoked";
  });
  const rec = p.bob.store.protectedFiles.receivedByMsg(bobMsg)!;
  assert.ok(rec.s1.every((b) => b === 0), "S1 dropped");
  assert.ok(p.bob.sink.events.some((e) => e.kind === "PrivittyFileAccessRevoked"));
  assert.equal(p.bob.protectedFiles.memory.endStreams(rec.id, "again"), 0, "none left running");
  // A restart after the revoke opens nothing either (nothing is asked again).
  await restartBob(p);
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  assert.equal(p.bob.outbox.length, 0);
});

Deno.test("duration expiry on the injected clock → expired; renewal asked, granted, denied", async () => {
  await using p = await prvPair();
  const { result, bobMsg } = await protectAndSend(p, PNG, { ...RULES, duration_minutes: 2 });
  assert.equal(bobState(p, bobMsg), "active");
  p.clock.now += 119_000;
  assert.equal(bobState(p, bobMsg), "active");
  p.clock.now += 1_000;
  const expired = p.bob.protectedFiles.status(bobMsg);
  assert.equal(expired.state, "expired");
  assert.match(expired.reason, /ask the owner to renew/);
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);

  await p.bob.protectedFiles.requestRenewal(bobMsg);
  assert.equal(bobState(p, bobMsg), "waiting_owner_action");
  await exchange(p);
  assert.ok(
    p.alice.sink.events.some((e) =>
      e.kind === "PrivittyAccessRenewRequested" && e.fileId === result.file_id &&
      e.requesterContactId === p.bobOnAlice
    ),
  );
  assert.deepEqual(
    p.alice.protectedFiles.status(
      p.alice.store.msgs.stampsOfChat(p.aliceChat, false).at(-1)!.id,
    ).recipients,
    [{ contact_id: p.bobOnAlice, state: "waiting_owner_action", forwarded_by: 0 }],
  );
  await p.alice.protectedFiles.owner.respondRenewal(result.file_id, p.bobOnAlice, true);
  await exchange(p);
  assert.equal(bobState(p, bobMsg), "active");
  assert.deepEqual(await readAll((await bobViewer(p).open(bobMsg))!.plaintext), PNG);

  p.clock.now += 121_000;
  assert.equal(bobState(p, bobMsg), "expired");
  await p.bob.protectedFiles.requestRenewal(bobMsg);
  await exchange(p);
  await p.alice.protectedFiles.owner.respondRenewal(result.file_id, p.bobOnAlice, false);
  await exchange(p);
  assert.equal(bobState(p, bobMsg), "denied");
  await assert.rejects(
    () => p.alice.protectedFiles.owner.respondRenewal(result.file_id, p.bobOnAlice, true),
    /no pending renewal request/,
  );
});

Deno.test("forwarding a received .prv is refused when allow_forward=false", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, RULES);
  const blob = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(bobMsg)!.file);
  const bobChat = p.bob.store.msgs.get(bobMsg)!.chatId;
  await assert.rejects(
    () => sendFile(p.bob, bobChat, blob, p.filesDir),
    (e: Error) => e instanceof GatewayError && /allow_forward=false/.test(e.message),
  );
  const before = p.bob.store.msgs.stampsOfChat(bobChat, false).length;
  assert.equal(before, 1, "nothing stored");
  const allowed = await protectAndSend(p, PNG, { ...RULES, allow_forward: true }, "b.bin");
  const blob2 = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(allowed.bobMsg)!.file);
  assert.ok((await sendFile(p.bob, bobChat, blob2, p.filesDir)).msgId > 0);
});

Deno.test("B restarted: requested (asked automatically), then active after A's grant", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, { ...RULES, duration_minutes: 60 });
  await restartBob(p);
  const first = p.bob.protectedFiles.status(bobMsg);
  assert.equal(first.state, "requested");
  await assert.rejects(() => bobViewer(p).open(bobMsg), (e: Error) => {
    return e instanceof AccessDeniedError && e.state === "requested";
  });
  assert.equal(p.bob.outbox.length, 1, "the open asked the owner");
  await assert.rejects(() => bobViewer(p).open(bobMsg), AccessDeniedError);
  assert.equal(p.bob.outbox.length, 1, "asked once a minute at most");
  await exchange(p);
  assert.equal(bobState(p, bobMsg), "active");
  assert.deepEqual(await readAll((await bobViewer(p).open(bobMsg))!.plaintext), PNG);
  // The window still ends where it started at receipt, not at the new grant.
  p.clock.now += 3_600_000;
  assert.equal(bobState(p, bobMsg), "expired");
});

Deno.test("A offline: B's open after a restart stays requested with a clear reason", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, RULES);
  await restartBob(p);
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  p.bob.outbox.splice(0); // the request never reaches Alice
  p.clock.now += 600_000;
  const s = p.bob.protectedFiles.status(bobMsg);
  assert.equal(s.state, "requested");
  assert.match(s.reason, /asked the owner for access at .*no grant has arrived yet.*offline/);
});

Deno.test("a tampered .prv fails to decrypt (DecryptError → 500)", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, RULES);
  const path = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(bobMsg)!.file);
  const bytes = await Deno.readFile(path);
  bytes[200] ^= 1;
  await Deno.writeFile(path, bytes);
  await assert.rejects(() => bobViewer(p).open(bobMsg), DecryptError);
});

/** Sets the mtime of message `msgId`'s blob an hour back: a file received a while ago. */
async function receivedEarlier(account: PrvPair["bob"], msgId: number): Promise<string> {
  const path = blobPath(account.ctx.blobDir, account.store.msgs.get(msgId)!.file);
  const anHourAgo = (Date.now() - 3_600_000) / 1000;
  await Deno.utime(path, anHourAgo, anHourAgo);
  return path;
}

Deno.test("a second open reuses what the first verified; a file rewritten since is verified again", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, RULES);
  const path = await receivedEarlier(p.bob, bobMsg);
  const cache = p.bob.protectedFiles.openCache;
  const v = bobViewer(p);
  assert.deepEqual(await readAll((await v.open(bobMsg))!.plaintext), PNG);
  assert.deepEqual([cache.hits, cache.size], [0, 1]);
  const again = (await v.open(bobMsg))!;
  assert.equal(cache.hits, 1);
  assert.equal(again.mime, "image/png");
  assert.equal(again.size, PNG.length);
  const ends: number[] = [];
  assert.deepEqual(await readAll(again.body!((n) => ends.push(n))), PNG);
  assert.deepEqual(ends, [PNG.length]);
  assert.deepEqual(
    await readAll((await v.open(bobMsg))!.slice!(70_000, 70_010)),
    PNG.slice(70_000, 70_010),
  );
  // Rewritten in place (same size, one bit flipped in chunk 0): opened and checked again.
  const bytes = await Deno.readFile(path);
  bytes[200] ^= 1;
  await Deno.writeFile(path, bytes);
  const hits = cache.hits;
  await assert.rejects(() => v.open(bobMsg), DecryptError);
  assert.equal(cache.hits, hits);
  assert.equal(cache.size, 0, "a file that fails is not cached");
  // Gone: 404, and nothing kept.
  await receivedEarlier(p.bob, bobMsg);
  await Deno.remove(path);
  assert.equal(await v.open(bobMsg), undefined);
  assert.equal(cache.size, 0);
});

Deno.test("the open cache forgets a received file when its access ends (revoke, expiry)", async () => {
  await using p = await prvPair();
  const first = await protectAndSend(p, PNG, RULES);
  const second = await protectAndSend(p, PNG.slice(0, 90_000), { ...RULES, duration_minutes: 2 });
  await receivedEarlier(p.bob, first.bobMsg);
  await receivedEarlier(p.bob, second.bobMsg);
  const cache = p.bob.protectedFiles.openCache;
  const v = bobViewer(p);
  for (const msg of [first.bobMsg, second.bobMsg]) await (await v.open(msg))!.plaintext.cancel();
  assert.equal(cache.size, 2);
  // A revoke drops the grant, and with it what the grant opened.
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, first.result.file_id, p.bobOnAlice);
  await exchange(p);
  assert.equal(cache.size, 1);
  await assert.rejects(() => v.open(first.bobMsg), AccessDeniedError);
  // Expiry has no event: the next open finds it expired and forgets it.
  p.clock.now += 121_000;
  await assert.rejects(() => v.open(second.bobMsg), (e: Error) => {
    return e instanceof AccessDeniedError && e.state === "expired";
  });
  assert.equal(cache.size, 0);
});

Deno.test("revoke ends a running whole-file body (the route's) and a range", async () => {
  await using p = await prvPair();
  const big = pngBytes(600_000); // more chunks than one read-ahead run holds
  const { result, bobMsg } = await protectAndSend(p, big, RULES);
  const v = bobViewer(p);
  const ends: number[] = [];
  const body = (await v.open(bobMsg))!.body!((n) => ends.push(n)).getReader();
  const range = (await v.open(bobMsg))!.slice!(0, big.length).getReader();
  assert.ok(!(await body.read()).done);
  assert.ok(!(await range.read()).done);
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await exchange(p);
  for (const r of [body, range]) {
    await assert.rejects(async () => {
      for (;;) if ((await r.read()).done) break;
    }, /revoked/);
  }
  assert.deepEqual(ends, [], "ViewerFileStreamed is not reported for a cut stream");
  const rec = p.bob.store.protectedFiles.receivedByMsg(bobMsg)!;
  assert.equal(p.bob.protectedFiles.memory.endStreams(rec.id, "again"), 0, "none left running");
});

Deno.test("a received file whose message was deleted reports deleted", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, RULES);
  await new Messages(p.bob.ctx).delete([bobMsg]);
  const s = p.bob.protectedFiles.status(bobMsg);
  assert.equal(s.state, "deleted");
  assert.equal(await p.bob.protectedFiles.open(bobMsg), undefined, "/stream: 404");
});
