/**
 * Stored secrets of earlier builds (v1: wrapped under a key from the device fingerprint) moved to
 * the installation's keys at start (docs/identity.md): rows of this device are re-wrapped once;
 * rows of another device are never unwrapped with the wrong key.
 */
import assert from "node:assert/strict";
import {
  deviceKeyOf,
  deviceTagOf,
  deviceWrap,
  storedSecretKeysOf,
} from "../../src/protected_files/key_shares.ts";
import { migrateStoredSecrets } from "../../src/protected_files/key_migration.ts";
import { ConfigKey } from "../../src/store/mod.ts";
import type { TestAccount } from "../core/_accounts.ts";
import { RecordingSink } from "../core/_messaging.ts";
import { protectedFileSource } from "../../src/protected_files/viewer_source.ts";
import { FileAccessDeniedError } from "../../src/protected_files/service.ts";
import { pngBytes } from "../viewer/_fixtures.ts";
import { exchange, protectAndSend, prvPair, readAll, restartAlice, restartBob } from "./_pair.ts";

const RULES = { allow_download: false, allow_forward: false, duration_minutes: 0 };
const PNG = pngBytes(70_000);
const FP = "f".repeat(64);

/** Rewrites an account's rows as a v1 build stored them, under the v1 key of `fingerprint`. */
function toV1(a: TestAccount, fingerprint: string): void {
  const keys = storedSecretKeysOf(a.store.config.get(ConfigKey.INSTALLATION_SECRET)!, "");
  const v1 = deviceKeyOf(fingerprint);
  const store = a.store.protectedFiles;
  for (const r of store.receivedKeys()) {
    const s1 = deviceWrap(keys.recipient, "s1", r.fileUid, r.s1);
    store.setReceivedKey(r.id, deviceWrap(v1, "s1", r.fileUid, s1), deviceTagOf(v1));
  }
  for (const s of store.sentKeys()) {
    const cek = deviceWrap(keys.owner, "cek", s.fileUid, s.cek);
    store.setSentKey(s.id, deviceWrap(v1, "cek", s.fileUid, cek), "");
  }
}

Deno.test("v1 rows of this device are re-wrapped at start, once; every file opens and revokes", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  toV1(p.alice, FP);
  toV1(p.bob, FP);
  // The .prv's own path is gone: the copy in the blob directory proves the CEK.
  await Deno.remove(result.encrypted_path);
  await restartAlice(p, { machineId: "", fingerprint: FP });
  await restartBob(p, { machineId: "", fingerprint: FP });
  const again = await migrateStoredSecrets({
    store: p.bob.store.protectedFiles,
    keys: storedSecretKeysOf(p.bob.store.config.get(ConfigKey.INSTALLATION_SECRET)!, ""),
    v1Key: deviceKeyOf(FP),
    prvCandidates: () => [],
  });
  assert.deepEqual(again, { migrated: 0, reRequested: 0, unusableSent: 0 }, "idempotent");
  const rec = p.bob.store.protectedFiles.receivedByMsg(bobMsg)!;
  assert.ok(rec.s1.some((b) => b !== 0), "S1 kept (re-wrapped), not dropped");
  const alice = protectedFileSource(p.alice.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await alice(aliceMsg))!.plaintext), PNG);
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  await exchange(p);
  const bob = protectedFileSource(p.bob.protectedFiles, new RecordingSink());
  assert.deepEqual(await readAll((await bob(bobMsg))!.plaintext), PNG, "S1 and S2 both right");
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await exchange(p);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "revoked");
});

Deno.test("v1 rows of another device: received ones ask again, sent ones are kept unusable", async () => {
  await using p = await prvPair();
  const { result, bobMsg, aliceMsg } = await protectAndSend(p, PNG, RULES);
  toV1(p.alice, "1".repeat(64)); // stored under a MAC the device no longer has
  toV1(p.bob, "1".repeat(64));
  await restartAlice(p, { machineId: "", fingerprint: FP });
  await restartBob(p, { machineId: "", fingerprint: FP });
  assert.equal(p.alice.store.protectedFiles.sent(result.file_id)!.keyTag, "", "left as it was");
  const alice = protectedFileSource(p.alice.protectedFiles, new RecordingSink());
  await assert.rejects(() => alice(aliceMsg), /wrapped under another device's key/);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "requested");
  await assert.rejects(() => p.bob.protectedFiles.open(bobMsg), FileAccessDeniedError);
  p.alice.outbox.splice(0);
  await exchange(p);
  assert.equal(p.alice.outbox.length, 0, "the owner sent no share it cannot vouch for");
  await p.alice.protectedFiles.owner.revoke(p.aliceChat, result.file_id, p.bobOnAlice);
  await exchange(p);
  assert.equal(p.bob.protectedFiles.status(bobMsg).state, "revoked");
});
