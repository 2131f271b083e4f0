/**
 * The real daemon refuses to start on a bad backup (`--import-backup` / EDGE_IMPORT_BACKUP): a
 * wrong passphrase, a truncated or changed file, a data directory that is not empty, each said
 * in one line, and nothing is written; and the CLI's offline `backup import` restores a good one.
 * No relay: each start fails before provisioning reaches the network.
 */
import assert from "node:assert/strict";
import { exportBackup } from "../../src/backup/export.ts";
import { HEADER_BYTES } from "../../src/backup/header.ts";
import { DataDirLayout } from "../../src/constants.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { spawnDaemon } from "../_helpers/daemon.ts";
import type { Relay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { ADDR, listTree, makeSourceDir, recorder, TEST_KDF } from "../backup/_backup_fixture.ts";
import { cliSh } from "./_backup_cli.ts";

const PASS = "start passphrase";
/** Never reached: every start here fails before step 4 (or the test stops it first). */
const NO_RELAY_HERE = { httpOrigin: "http://127.0.0.1:9", tlsEnv: () => ({}) } as unknown as Relay;

async function goodBackup(root: string): Promise<string> {
  const src = makeSourceDir(root);
  const deps = { ...src, events: recorder(), kdf: TEST_KDF, chunkBytes: 4096 };
  const file = await exportBackup(deps, src.filesDir, PASS);
  src.store.close();
  return file;
}

/** Starts the daemon on `dataDir` importing `file`; resolves with its exit code and output. */
async function startWith(
  dataDir: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<{ code: number; output: string }> {
  const daemon = spawnDaemon({ relay: NO_RELAY_HERE, dataDir, env, args });
  const code = await Promise.race([
    daemon.exited,
    new Promise<number>((r) => setTimeout(() => r(-1), 60_000)),
  ]);
  if (code === -1) await daemon.stop("SIGKILL");
  return { code, output: daemon.output() };
}

Deno.test({
  name: "a bad backup at start fails saying which, and the data directory stays as it was",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("backup-start");
    const file = await goodBackup(tmp.path);
    const bytes = await Deno.readFile(file);
    const cut = `${tmp.path}/cut.bak`;
    await Deno.writeFile(cut, bytes.slice(0, HEADER_BYTES + 4112));
    const changed = `${tmp.path}/changed.bak`;
    const flipped = bytes.slice();
    flipped[HEADER_BYTES + 9000] ^= 0x04;
    await Deno.writeFile(changed, flipped);
    const cases: [string, string, Record<string, string>, RegExp][] = [
      ["wrong passphrase", file, { EDGE_BACKUP_PASSPHRASE: "not it" }, /wrong passphrase/],
      ["truncated", cut, { EDGE_BACKUP_PASSPHRASE: PASS }, /is truncated/],
      ["tampered", changed, { EDGE_BACKUP_PASSPHRASE: PASS }, /damaged or was tampered with/],
    ];
    for (const [what, path, env, message] of cases) {
      const dataDir = `${tmp.path}/data-${what.replace(" ", "-")}`;
      // The environment form, and the flag form (start.sh makes the named file readable).
      const run = what === "truncated"
        ? await startWith(dataDir, env, [`--import-backup=${path}`])
        : await startWith(dataDir, { EDGE_IMPORT_BACKUP: path, ...env });
      assert.equal(run.code, 1, `${what}: ${run.output}`);
      assert.match(run.output, /edge-gateway: cannot restore the backup: /, what);
      assert.match(run.output, message, what);
      assert.doesNotMatch(run.output, /step 1\/7/, `${what}: provisioning did not start`);
      // start.sh makes the data and files directories; nothing else is there.
      assert.deepEqual(listTree(dataDir), ["files"], what);
    }

    // A data directory that already holds an account: refused, untouched (the flag form).
    const used = `${tmp.path}/used`;
    await Deno.mkdir(`${used}/accounts/1`, { recursive: true });
    await Deno.writeTextFile(`${used}/${DataDirLayout.ACCOUNTS_INDEX}`, "{}");
    const before = listTree(used);
    const run = await startWith(used, { EDGE_BACKUP_PASSPHRASE: PASS }, [
      "--import-backup",
      file,
    ]);
    assert.equal(run.code, 1, run.output);
    assert.match(
      run.output,
      /cannot restore into data directory .*: it is not empty \(it holds accounts\)/,
    );
    assert.deepEqual(listTree(used), [...before, "files"].sort());

    // No passphrase: a configuration error before anything runs.
    const bare = await startWith(`${tmp.path}/bare`, { EDGE_IMPORT_BACKUP: file });
    assert.equal(bare.code, 2, bare.output);
    assert.match(bare.output, /needs the backup's passphrase in EDGE_BACKUP_PASSPHRASE/);
  },
});

Deno.test({
  name:
    "backup import restores offline into an empty data directory; a wrong passphrase writes nothing",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("backup-cli");
    const file = await goodBackup(tmp.path);
    const target = `${tmp.path}/restored`;
    const wrong = await cliSh(["backup", "import", file, "--data-dir", target], {
      EDGE_BACKUP_PASSPHRASE: "not it",
    });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /wrong passphrase for backup/);
    assert.throws(() => Deno.statSync(target), Deno.errors.NotFound);

    const missing = await cliSh(["backup", "import", file, "--data-dir", target], {});
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /set the backup's passphrase in EDGE_BACKUP_PASSPHRASE/);

    const ok = await cliSh(["backup", "import", file, "--data-dir", target], {
      EDGE_BACKUP_PASSPHRASE: PASS,
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^restored ${ADDR} \\(2 files, taken .*\\) into ${target}`));
    const store = Store.open(`${target}/${DataDirLayout.DATABASE}`);
    try {
      assert.equal(store.config.get(ConfigKey.ADDR), ADDR);
    } finally {
      store.close();
    }
    assert.ok(!listTree(target).includes(DataDirLayout.MACHINE_ID));

    const again = await cliSh(["backup", "import", file, "--data-dir", target], {
      EDGE_BACKUP_PASSPHRASE: PASS,
    });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /it is not empty \(it holds accounts, privitty\.lic\)/);
  },
});
