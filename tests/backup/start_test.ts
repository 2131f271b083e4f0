/**
 * The restore step before provisioning: nothing without an import, a StartupError naming the
 * problem, and a data directory already restored from the same file left alone on restart.
 */
import assert from "node:assert/strict";
import { exportBackup } from "../../src/backup/export.ts";
import { restoreAtStart } from "../../src/backup/start.ts";
import { StartupError } from "../../src/errors.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { listTree, makeSourceDir, recorder, TEST_KDF } from "./_backup_fixture.ts";

const PASS = "start step";

async function twoBackups(root: string): Promise<[string, string]> {
  const src = makeSourceDir(root);
  const deps = { ...src, events: recorder(), kdf: TEST_KDF };
  const files = [
    await exportBackup(deps, src.filesDir, PASS),
    await exportBackup(deps, src.filesDir, PASS),
  ] as [string, string];
  src.store.close();
  return files;
}

Deno.test("restoreAtStart restores once; the same file again is ignored, another refused", async () => {
  await withTempDir(async (root) => {
    const [file, other] = await twoBackups(root);
    const dataDir = `${root}/new`;
    const config = (importBackup: string | undefined, backupPassphrase = PASS) => ({
      dataDir,
      importBackup,
      backupPassphrase,
    });
    await restoreAtStart(config(undefined));
    assert.deepEqual(listTree(dataDir), []);

    const wrong = await restoreAtStart(config(file, "nope")).then(() => undefined, (e) => e);
    assert.ok(wrong instanceof StartupError);
    assert.match(wrong.message, /^cannot restore the backup: wrong passphrase for backup /);
    assert.deepEqual(listTree(dataDir), []);

    await restoreAtStart(config(file));
    const restored = listTree(dataDir);
    assert.ok(restored.includes("accounts/1/gateway.db"));
    // A restart with the same environment: left alone, also when the file is gone.
    await restoreAtStart(config(file));
    await restoreAtStart(config(`${root}/gone.bak`));
    assert.deepEqual(listTree(dataDir), restored);

    const err = await restoreAtStart(config(other)).then(() => undefined, (e) => e);
    assert.ok(err instanceof StartupError);
    assert.match(err.message, /it is not empty \(it holds accounts, privitty\.lic\)/);
    assert.deepEqual(listTree(dataDir), restored);
  }, "backup-start");
});
