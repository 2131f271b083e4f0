/** Tests of the data-dir and accounts-dir steps and their docs/contract.md §1.4 start-up errors. */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import { prepareAccountsDir } from "../../src/provision/accounts_dir.ts";
import {
  foreignOwnerError,
  prepareDataDir,
  prepareDefaultFilesDir,
} from "../../src/provision/data_dir.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const startupError = (re: RegExp) => (e: Error) => e instanceof StartupError && re.test(e.message);

Deno.test("prepareAccountsDir() creates a private accounts dir and index, and accepts it again", async () => {
  await using tmp = await makeTempDir("acc");
  const dir = `${tmp.path}/data`;
  prepareDataDir(dir);
  const first = prepareAccountsDir(dir);
  assert.equal(first.created, true);
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(first.accountsDir).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(first.indexPath).mode! & 0o777, 0o600);
  assert.equal(Deno.statSync(first.databasePath).mode! & 0o777, 0o600);
  assert.equal(Deno.statSync(first.blobDir).mode! & 0o777, 0o700);
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(first.indexPath)).accounts, [{
    id: 1,
    dir: "1",
  }]);
  assert.equal(prepareAccountsDir(dir).created, false);
});

Deno.test("prepareDefaultFilesDir() creates <data dir>/files (0700), never a configured one", async () => {
  await using tmp = await makeTempDir("fd");
  prepareDefaultFilesDir(`${tmp.path}/files`, tmp.path);
  assert.equal(Deno.statSync(`${tmp.path}/files`).mode! & 0o777, 0o700);
  prepareDefaultFilesDir(`${tmp.path}/files`, tmp.path);
  prepareDefaultFilesDir(`${tmp.path}/elsewhere`, tmp.path);
  assert.throws(() => Deno.statSync(`${tmp.path}/elsewhere`), Deno.errors.NotFound);
});

Deno.test("prepareDataDir() tightens an existing directory to 0700 and refuses a file", async () => {
  await using tmp = await makeTempDir("dd");
  Deno.chmodSync(tmp.path, 0o755);
  prepareDataDir(tmp.path);
  assert.equal(Deno.statSync(tmp.path).mode! & 0o777, 0o700);
  Deno.writeTextFileSync(`${tmp.path}/file`, "");
  assert.throws(() => prepareDataDir(`${tmp.path}/file`), startupError(/file/));
});

Deno.test("prepareAccountsDir() refuses license files without an accounts index", async () => {
  await using tmp = await makeTempDir("acc");
  Deno.writeTextFileSync(`${tmp.path}/privitty.lic`, "{}");
  assert.throws(
    () => prepareAccountsDir(tmp.path),
    startupError(
      new RegExp(
        `^accounts directory is not empty: ${tmp.path} holds files \\(privitty\\.lic\\) but no ` +
          `accounts index; start again from an empty data directory$`,
      ),
    ),
  );
  Deno.writeTextFileSync(`${tmp.path}/license.json`, "{}");
  assert.throws(
    () => prepareAccountsDir(tmp.path),
    startupError(/holds files \(privitty\.lic, license\.json\)/),
    "an earlier build's license.json counts too",
  );
  assert.throws(
    () => Deno.statSync(`${tmp.path}/accounts`),
    Deno.errors.NotFound,
    "nothing created",
  );
});

Deno.test("prepareAccountsDir() refuses a foreign non-empty accounts dir", async () => {
  await using tmp = await makeTempDir("acc");
  Deno.mkdirSync(`${tmp.path}/accounts/xyz`, { recursive: true });
  assert.throws(
    () => prepareAccountsDir(tmp.path),
    startupError(
      /^accounts directory is not empty: .*\/accounts holds files \(xyz\) but no accounts index/,
    ),
  );
});

Deno.test("prepareAccountsDir() names an accounts path that is not a directory, and a bad index", async () => {
  await using tmp = await makeTempDir("acc");
  Deno.writeTextFileSync(`${tmp.path}/accounts`, "");
  assert.throws(
    () => prepareAccountsDir(tmp.path),
    startupError(/^Accounts directory .* is not a directory$/),
  );
  Deno.removeSync(`${tmp.path}/accounts`);
  prepareAccountsDir(tmp.path);
  Deno.writeTextFileSync(`${tmp.path}/accounts/accounts.json`, '{"accounts":[]}');
  assert.throws(() => prepareAccountsDir(tmp.path), startupError(/does not list account 1/));
});

/** Runs `fn` with `dir` bind-mounted read-only (the test runner's private mount namespace). */
function withReadOnly(dir: string, fn: () => void): void {
  const mount = (args: string[]) => new Deno.Command("mount", { args }).outputSync();
  const ok = mount(["--bind", dir, dir]).success && mount(["-o", "remount,bind,ro", dir]).success;
  try {
    if (!ok) throw new Error("cannot bind-mount read-only here (needs root in a mount namespace)");
    fn();
  } finally {
    new Deno.Command("umount", { args: [dir] }).outputSync();
  }
}

// Tests run as root, which may write anywhere, so "not writable" is made real with a read-only
// bind mount. That needs the private mount namespace scripts/test.sh runs the tests in.
const NO_MOUNT_NS = Deno.uid() !== 0 || Deno.env.get("EDGE_TEST_IN_NS") !== "1";

Deno.test({
  name:
    "prepareAccountsDir() reports an unwritable accounts directory with the contract's messages",
  ignore: NO_MOUNT_NS,
  async fn() {
    await using tmp = await makeTempDir("ro");
    const { accountsDir } = prepareAccountsDir(tmp.path);
    withReadOnly(accountsDir, () => {
      assert.throws(
        () => prepareAccountsDir(tmp.path),
        startupError(new RegExp(`^Accounts directory ${accountsDir} is not writable: `)),
      );
    });
    Deno.chmodSync(accountsDir, 0o755); // needs securing, which a read-only mount refuses
    withReadOnly(accountsDir, () => {
      assert.throws(
        () => prepareAccountsDir(tmp.path),
        startupError(new RegExp(`^Failed to secure accounts directory ${accountsDir}: `)),
      );
    });
  },
});

Deno.test({
  name: "prepareDataDir() reports an unwritable data directory",
  ignore: NO_MOUNT_NS,
  async fn() {
    await using tmp = await makeTempDir("ro");
    const dir = `${tmp.path}/data`;
    prepareDataDir(dir);
    withReadOnly(dir, () => {
      assert.throws(
        () => prepareDataDir(dir),
        startupError(new RegExp(`^Data directory ${dir} is not writable: `)),
      );
      assert.throws(
        () => prepareDataDir(`${dir}/sub`),
        startupError(/^Cannot prepare data directory/),
      );
    });
  },
});

Deno.test("foreignOwnerError() says exactly what to run when another user owns the directory", () => {
  const err = foreignOwnerError(
    "/var/lib/privitty",
    { uid: 0, mode: 0o40755 },
    new Error("EPERM"),
    1000,
  );
  assert.ok(err instanceof StartupError);
  assert.equal(
    err.message,
    "Accounts directory /var/lib/privitty is not writable by UID 1000, the user the daemon runs " +
      "as (it is owned by UID 0, mode 0755). Give it to UID 1000, then start again: as root, " +
      "chown -R 1000:1000 /var/lib/privitty; for a Docker volume: docker run --rm -v " +
      "<volume>:/var/lib/privitty busybox chown -R 1000:1000 /var/lib/privitty; for a bind " +
      "mount: chown -R 1000:1000 <host directory> on the host",
  );
  assert.equal(foreignOwnerError("/d", { uid: 1000, mode: 0o755 }, null, 1000), undefined);
  assert.equal(foreignOwnerError("/d", { uid: 1000, mode: 0o755 }, null, 0), undefined, "root");
  assert.equal(foreignOwnerError("/d", { uid: 0, mode: 0o755 }, null, undefined), undefined);
});
