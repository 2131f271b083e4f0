/**
 * `exportBackup`: the file it writes restores to the same account (database, blobs, license,
 * journal position) without the host's files; progress events; the directory rules; one export
 * at a time.
 */
import assert from "node:assert/strict";
import { exportBackup } from "../../src/backup/export.ts";
import { BackupError, BackupFault } from "../../src/backup/errors.ts";
import { restoreBackup } from "../../src/backup/restore.ts";
import { DataDirLayout } from "../../src/constants.ts";
import { FileAccessError, FileRule } from "../../src/core/file_access.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import {
  ADDR,
  BLOBS,
  listTree,
  makeSourceDir,
  progressOf,
  recorder,
  TEST_KDF,
} from "./_backup_fixture.ts";

const PASS = "a long backup passphrase";

Deno.test("an export restores to the same account, blobs and license, without host files", async () => {
  await withTempDir(async (root) => {
    const src = makeSourceDir(root);
    Deno.writeTextFileSync(`${src.dataDir}/accounts/1/.backup-snapshot-killed.db`, "stale");
    const sink = recorder();
    const deps = { ...src, events: sink, kdf: TEST_KDF, chunkBytes: 4096, clock: () => 0 };
    const file = await exportBackup(deps, src.filesDir, PASS);
    src.store.close();
    assert.equal(file, `${await Deno.realPath(src.filesDir)}/edge-backup-1970-01-01-000000.bak`);
    assert.equal((Deno.statSync(file).mode ?? 0) & 0o777, 0o600);
    assert.deepEqual(listTree(src.filesDir), ["edge-backup-1970-01-01-000000.bak"]);
    // Nothing left behind in the data directory (the snapshot is removed).
    assert.ok(!listTree(src.dataDir).some((p) => p.includes(".backup-snapshot")));

    const progress = progressOf(sink.events);
    assert.equal(progress[0], 10);
    assert.equal(progress.at(-1), 1000);
    assert.ok(progress.length > 3, `progress: ${progress}`);
    assert.deepEqual(progress, [...progress].sort((a, b) => a - b));
    assert.deepEqual(sink.events.filter((e) => e.kind === "ImexFileWritten"), [
      { kind: "ImexFileWritten", path: file },
    ]);

    const target = `${root}/restored`;
    const manifest = await restoreBackup(file, target, PASS);
    assert.equal(manifest.addr, ADDR);
    assert.equal(manifest.journalPosition, 7);
    assert.equal(manifest.blobs, 2);
    const blobDir = `${target}/${DataDirLayout.BLOB_DIR}`;
    for (const [name, text] of Object.entries(BLOBS)) {
      assert.equal(Deno.readTextFileSync(`${blobDir}/${name}`), text);
    }
    assert.deepEqual(listTree(blobDir), Object.keys(BLOBS).sort());
    assert.equal(
      Deno.readTextFileSync(`${target}/${DataDirLayout.LICENSE_FILE}`),
      "license bytes",
    );
    const top = listTree(target).filter((p) => !p.includes("/"));
    assert.deepEqual(top, [DataDirLayout.ACCOUNTS_DIR, DataDirLayout.LICENSE_FILE]);
    const restored = Store.open(`${target}/${DataDirLayout.DATABASE}`);
    try {
      assert.equal(restored.config.get(ConfigKey.ADDR), ADDR);
      assert.equal(restored.events.reservedId(), 7);
    } finally {
      restored.close();
    }
  }, "backup-export");
});

Deno.test("an export while the account changes holds every commit before its snapshot", async () => {
  await withTempDir(async (root) => {
    const src = makeSourceDir(root);
    const deps = { ...src, events: recorder(), kdf: TEST_KDF, clock: () => 0 };
    const running = exportBackup(deps, src.filesDir, PASS);
    // Writes while the export streams: they land after the snapshot, the file stays whole.
    for (let i = 0; i < 20; i++) {
      src.store.config.set(ConfigKey.DISPLAY_NAME, `name ${i}`);
      await new Promise((r) => setTimeout(r, 0));
    }
    const file = await running;
    src.store.close();
    const manifest = await restoreBackup(file, `${root}/restored`, PASS);
    assert.equal(manifest.addr, ADDR);
  }, "backup-export");
});

Deno.test("a second export while one runs is refused with -1; the first completes", async () => {
  await withTempDir(async (root) => {
    const src = makeSourceDir(root);
    const deps = { ...src, events: recorder(), kdf: TEST_KDF, clock: () => 0 };
    const first = exportBackup(deps, src.filesDir, PASS);
    const second = await exportBackup(deps, src.filesDir, PASS).then(() => undefined, (e) => e);
    assert.ok(second instanceof BackupError);
    assert.equal(second.fault, BackupFault.BUSY);
    assert.equal(second.code, -1);
    assert.match(second.message, /a backup export is already running/);
    const file = await first;
    assert.ok(Deno.statSync(file).isFile);
    // Once done, the next one runs (and takes a free name).
    const again = await exportBackup(deps, src.filesDir, PASS);
    assert.match(again, /edge-backup-1970-01-01-000000-2\.bak$/);
    src.store.close();
  }, "backup-export");
});

Deno.test("the directory must be the files directory or inside it, and exist", async () => {
  await withTempDir(async (root) => {
    const src = makeSourceDir(root);
    Deno.mkdirSync(`${src.filesDir}/backups`);
    Deno.writeTextFileSync(`${src.filesDir}/plain.txt`, "x");
    Deno.symlinkSync(src.dataDir, `${src.filesDir}/escape`);
    const sink = recorder();
    const deps = { ...src, events: sink, kdf: TEST_KDF, clock: () => 0 };
    const cases: [string, FileRule, RegExp][] = [
      ["backups", FileRule.NOT_ABSOLUTE, /is not an absolute path/],
      [`${src.filesDir}/missing`, FileRule.NOT_FOUND, /does not exist/],
      [root, FileRule.OUTSIDE, /is not inside the files directory/],
      [src.dataDir, FileRule.OUTSIDE, /is not inside the files directory/],
      [`${src.dataDir}/accounts`, FileRule.OUTSIDE, /is not inside the files directory/],
      [`${src.filesDir}/escape`, FileRule.OUTSIDE, /leads outside the files directory/],
      [`${src.filesDir}/plain.txt`, FileRule.NOT_DIRECTORY, /is not a directory/],
    ];
    for (const [dir, rule, message] of cases) {
      const err = await exportBackup(deps, dir, PASS).then(() => undefined, (e) => e);
      assert.ok(err instanceof FileAccessError, dir);
      assert.equal(err.rule, rule, dir);
      assert.equal(err.code, -1);
      assert.match(err.message, /^export_backup: /);
      assert.match(err.message, message, dir);
    }
    assert.deepEqual(progressOf(sink.events), cases.map(() => 0));
    const ok = await exportBackup(deps, `${src.filesDir}/backups`, PASS);
    assert.ok(ok.includes("/files/backups/edge-backup-"));
    await assert.rejects(() => exportBackup(deps, src.filesDir, ""), /the passphrase is empty/);
    src.store.close();
  }, "backup-export");
});
