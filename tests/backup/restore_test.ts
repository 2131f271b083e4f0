/**
 * `restoreBackup`: a wrong passphrase, a cut or changed file, or a data directory that already
 * holds a gateway's state is refused saying which, and nothing is written.
 */
import assert from "node:assert/strict";
import { exportBackup } from "../../src/backup/export.ts";
import { BackupError, BackupFault } from "../../src/backup/errors.ts";
import { HEADER_BYTES } from "../../src/backup/header.ts";
import { backupId, restoreBackup } from "../../src/backup/restore.ts";
import { DataDirLayout } from "../../src/constants.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { listTree, makeSourceDir, recorder, TEST_KDF } from "./_backup_fixture.ts";

const PASS = "restore passphrase";

/** A backup file of a fresh source directory under `root`. */
async function backupFile(root: string): Promise<string> {
  const src = makeSourceDir(root);
  const deps = { ...src, events: recorder(), kdf: TEST_KDF, chunkBytes: 4096, clock: () => 0 };
  const file = await exportBackup(deps, src.filesDir, PASS);
  src.store.close();
  return file;
}

async function refusal(file: string, target: string, pass = PASS): Promise<BackupError> {
  const err = await restoreBackup(file, target, pass).then(() => undefined, (e) => e);
  assert.ok(err instanceof BackupError, `expected a BackupError, got ${err}`);
  return err;
}

Deno.test("bad files are refused saying which, and the target is left as it was", async () => {
  await withTempDir(async (root) => {
    const file = await backupFile(root);
    const bytes = Deno.readFileSync(file);
    const variant = (name: string, data: Uint8Array) => {
      const path = `${root}/${name}`;
      Deno.writeFileSync(path, data);
      return path;
    };
    const flipped = bytes.slice();
    flipped[HEADER_BYTES + 5000] ^= 0x80;
    const cases: [string, string, BackupFault, RegExp][] = [
      [file, "wrong passphrase", BackupFault.WRONG_PASSPHRASE, /wrong passphrase for backup/],
      [
        variant("cut.bak", bytes.slice(0, HEADER_BYTES + 4112)),
        PASS,
        BackupFault.TRUNCATED,
        /is truncated/,
      ],
      [
        variant("cut2.bak", bytes.slice(0, bytes.length - 1)),
        PASS,
        BackupFault.DAMAGED,
        /damaged or was tampered/,
      ],
      [variant("flip.bak", flipped), PASS, BackupFault.DAMAGED, /chunk 1 does not authenticate/],
      [
        variant("other.txt", new TextEncoder().encode("hello")),
        PASS,
        BackupFault.NOT_A_BACKUP,
        /is not a backup/,
      ],
    ];
    // Into a missing directory (it is not left behind) and into an empty existing one.
    for (const existing of [false, true]) {
      for (const [path, pass, fault, message] of cases) {
        const target = `${root}/target-${existing}`;
        if (existing) Deno.mkdirSync(target, { recursive: true });
        const err = await refusal(path, target, pass);
        assert.equal(err.fault, fault, path);
        assert.match(err.message, message);
        assert.equal(err.code, -1);
        if (existing) assert.deepEqual(listTree(target), [], path);
        else assert.throws(() => Deno.statSync(target), Deno.errors.NotFound);
      }
    }
  }, "backup-restore");
});

Deno.test("a data directory holding gateway state is refused; the files directory may be there", async () => {
  await withTempDir(async (root) => {
    const file = await backupFile(root);
    for (
      const entry of [
        DataDirLayout.ACCOUNTS_DIR,
        DataDirLayout.LICENSE_FILE,
        DataDirLayout.MACHINE_ID,
      ]
    ) {
      const target = `${root}/t-${entry}`;
      Deno.mkdirSync(target);
      Deno.writeTextFileSync(`${target}/${entry}`, "x");
      const before = listTree(target);
      const err = await refusal(file, target);
      assert.equal(err.fault, BackupFault.TARGET_NOT_EMPTY);
      assert.match(err.message, new RegExp(`it is not empty \\(it holds ${entry}\\)`));
      assert.deepEqual(listTree(target), before);
    }
    // The backup file itself may wait in the target's files directory; what a killed restore
    // left (`.restore-*`) goes.
    const target = `${root}/with-files`;
    Deno.mkdirSync(`${target}/files`, { recursive: true });
    Deno.mkdirSync(`${target}/.restore-killed/accounts`, { recursive: true });
    Deno.copyFileSync(file, `${target}/files/in.bak`);
    await restoreBackup(`${target}/files/in.bak`, target, PASS);
    assert.ok(listTree(target).includes(DataDirLayout.DATABASE));
    assert.ok(!listTree(target).some((p) => p.startsWith(".restore-")));
    assert.equal(
      Deno.readTextFileSync(`${target}/accounts/restored-from`).trim(),
      await backupId(file),
    );
  }, "backup-restore");
});
