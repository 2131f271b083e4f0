/** Tests of the data-dir, accounts-dir and lock steps (SPEC §1 start-up errors). */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import { prepareAccountsDir } from "../../src/provision/accounts_dir.ts";
import { DataDirLock, prepareDataDir } from "../../src/provision/data_dir.ts";
import { makeTempDir } from "../_helpers/temp.ts";

Deno.test("prepareAccountsDir() creates a private accounts dir and index, and accepts it again", async () => {
  await using tmp = await makeTempDir("acc");
  const dir = `${tmp.path}/data`;
  prepareDataDir(dir);
  const first = prepareAccountsDir(dir);
  assert.equal(first.created, true);
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(first.accountsDir).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(`${first.accountsDir}/accounts.json`).mode! & 0o777, 0o600);
  assert.equal(prepareAccountsDir(dir).created, false);
});

Deno.test("prepareAccountsDir() refuses license files without an accounts index", async () => {
  await using tmp = await makeTempDir("acc");
  Deno.writeTextFileSync(`${tmp.path}/license.json`, "{}");
  assert.throws(
    () => prepareAccountsDir(tmp.path),
    (e: Error) => e instanceof StartupError && /accounts directory is not empty/.test(e.message),
  );
});

Deno.test("prepareAccountsDir() refuses a foreign non-empty accounts dir", async () => {
  await using tmp = await makeTempDir("acc");
  Deno.mkdirSync(`${tmp.path}/accounts/xyz`, { recursive: true });
  assert.throws(() => prepareAccountsDir(tmp.path), /accounts directory is not empty/);
});

Deno.test("prepareAccountsDir() names an accounts path that is not a directory", async () => {
  await using tmp = await makeTempDir("acc");
  Deno.writeTextFileSync(`${tmp.path}/accounts`, "");
  // A file where the directory should be: the index cannot exist, the dir check refuses it.
  assert.throws(() => prepareAccountsDir(tmp.path), (e: Error) => e instanceof StartupError);
});

Deno.test("DataDirLock is exclusive across processes and released on exit", async () => {
  await using tmp = await makeTempDir("lock");
  const lock = DataDirLock.acquire(tmp.path);
  const code = `import { DataDirLock } from "${
    new URL("../../src/provision/data_dir.ts", import.meta.url).href
  }";
    try { DataDirLock.acquire(${
    JSON.stringify(tmp.path)
  }); console.log("acquired"); } catch (e) { console.log(e.message); }`;
  const run = async () =>
    new TextDecoder().decode(
      (await new Deno.Command(Deno.execPath(), { args: ["eval", code] }).output()).stdout,
    );
  assert.match(
    await run(),
    new RegExp(`already running on data directory .* held by pid ${Deno.pid}`),
  );
  lock.release();
  assert.match(await run(), /acquired/);
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

Deno.test({
  name: "prepareAccountsDir() reports an unwritable accounts directory with the SPEC messages",
  ignore: Deno.uid() !== 0 || Deno.env.get("EDGE_TEST_IN_NS") !== "1",
  async fn() {
    await using tmp = await makeTempDir("ro");
    prepareAccountsDir(tmp.path);
    const accounts = `${tmp.path}/accounts`;
    withReadOnly(accounts, () => {
      assert.throws(
        () => prepareAccountsDir(tmp.path),
        (e: Error) =>
          e instanceof StartupError &&
          /^(Failed to secure accounts directory|Accounts directory .* is not writable)/.test(
            e.message,
          ),
      );
    });
    withReadOnly(tmp.path, () => {
      const fresh = `${tmp.path}`;
      assert.throws(() => prepareAccountsDir(fresh), StartupError);
    });
  },
});
