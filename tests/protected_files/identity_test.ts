/**
 * Protected files and the installation identity (docs/identity.md), one test per row of the
 * model: a new MAC changes nothing; another host asks the owners again for received files and
 * keeps sent files manageable; a CEK wrapped for another device is an error, never a key share.
 */
import assert from "node:assert/strict";
import { ConfigKey } from "../../src/store/mod.ts";
import { FileAccessDeniedError } from "../../src/protected_files/service.ts";
import { protectedFileSource } from "../../src/protected_files/viewer_source.ts";
import { GatewayError } from "../../src/errors.ts";
import { setLogSink } from "../../src/log.ts";
import { RecordingSink } from "../core/_messaging.ts";
import { pngBytes } from "../viewer/_fixtures.ts";
import { exchange, protectAndSend, prvPair, readAll, restartAlice, restartBob } from "./_pair.ts";

const RULES = { allow_download: false, allow_forward: false, duration_minutes: 0 };
const PNG = pngBytes(70_000);

Deno.test("a new MAC (same machine id, another fingerprint) changes nothing for sent and received files", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  await restartBob(p, { machineId: "", fingerprint: "new-mac-fingerprint" });
  await restartAlice(p, { machineId: "", fingerprint: "new-mac-fingerprint" });
  // Bob: the restart forgot the grant; asking gives a good one and the file opens.
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  await exchange(p);
  const bob = protectedFileSource(p.bob.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await bob(bobMsg))!.plaintext), PNG);
  // Alice: her own copy opens, and the revoke reaches Bob.
  const alice = protectedFileSource(p.alice.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await alice(aliceMsg))!.plaintext), PNG);
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await exchange(p);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "revoked");
});

Deno.test("B's data on another host: received files ask the owner again and open after its grant", async () => {
  await using p = await prvPair();
  const { bobMsg } = await protectAndSend(p, PNG, RULES);
  await restartBob(p, { machineId: "" }); // the start that records this machine id
  await restartBob(p, { machineId: "b".repeat(32) }); // the same data on another host
  assert.match(p.bob.store.config.get(ConfigKey.INSTALLATION_MOVED)!, /"to":"b{32}"/);
  const rec = p.bob.store.protectedFiles.receivedByMsg(bobMsg)!;
  assert.ok(rec.s1.every((b) => b === 0), "the S1 this host cannot unwrap is dropped");
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "requested");
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  assert.equal(p.bob.outbox.length, 1, "the open asked the owner");
  await exchange(p); // Alice answers with the otk_pdu and a grant, by the usual rules
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "active");
  const bob = protectedFileSource(p.bob.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await bob(bobMsg))!.plaintext), PNG);
});

Deno.test("A's data on another host: sent files still open, grant and revoke", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  await restartAlice(p, { machineId: "" });
  await restartAlice(p, { machineId: "a".repeat(32) });
  const alice = protectedFileSource(p.alice.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await alice(aliceMsg))!.plaintext), PNG);
  await restartBob(p);
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  await exchange(p);
  const bob = protectedFileSource(p.bob.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await bob(bobMsg))!.plaintext), PNG, "a correct share");
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await exchange(p);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "revoked");
});

Deno.test("a CEK wrapped under another device's key is an error: no key share, no stream", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  const sent = p.alice.store.protectedFiles.sent(result.file_id)!;
  p.alice.store.protectedFiles.setSentKey(sent.id, sent.cek, "0123456789abcdef");
  await restartBob(p);
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  p.alice.outbox.splice(0);
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    await exchange(p); // Bob's request reaches Alice, who must not answer with a wrong share
  } finally {
    setLogSink(prev);
  }
  assert.equal(p.alice.outbox.length, 0, "no grant went out");
  assert.ok(
    lines.some((l) => /ERROR .*access request not answered.*file_id=1/.test(l)),
    lines.join("\n"),
  );
  assert.ok(!lines.some((l) => /receive error/.test(l)), "the request mail itself was fine");
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "requested");
  const alice = protectedFileSource(p.alice.protectedFiles, new RecordingSink());
  await assert.rejects(
    () => alice(aliceMsg),
    (e: Error) => e instanceof GatewayError && /wrapped under another device's key/.test(e.message),
  );
  const own = p.alice.protectedFiles.status(aliceMsg);
  assert.equal(own.state, "not_found");
  assert.match(own.reason, /wrapped under another device's key/);
  // Revoking needs no key and still works.
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await exchange(p);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "revoked");
});
