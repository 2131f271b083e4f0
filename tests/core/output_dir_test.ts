/** `resolveOutputDir`: the files directory or a directory inside it, real path, else a rule. */
import assert from "node:assert/strict";
import { FileAccessError, FileRule } from "../../src/core/file_access.ts";
import { resolveOutputDir } from "../../src/core/output_dir.ts";
import { withTempDir } from "../_helpers/temp.ts";

const USE = { method: "export_backup", verb: "written to" };

async function rule(dir: string, filesDir: string): Promise<FileRule> {
  const err = await resolveOutputDir(dir, { filesDir }, USE).then(() => undefined, (e) => e);
  assert.ok(err instanceof FileAccessError, `${dir} was accepted`);
  return err.rule;
}

Deno.test("the files directory and directories inside it resolve to their real path", async () => {
  await withTempDir(async (root) => {
    const files = `${root}/files`;
    Deno.mkdirSync(`${files}/sub/deeper`, { recursive: true });
    Deno.symlinkSync(`${files}/sub`, `${files}/link-in`);
    const real = await Deno.realPath(files);
    assert.equal(await resolveOutputDir(files, { filesDir: files }, USE), real);
    assert.equal(
      await resolveOutputDir(`${files}/sub/deeper/`, { filesDir: files }, USE),
      `${real}/sub/deeper`,
    );
    assert.equal(
      await resolveOutputDir(`${files}/link-in`, { filesDir: files }, USE),
      `${real}/sub`,
    );
  }, "outdir");
});

Deno.test("anything else is refused with its rule", async () => {
  await withTempDir(async (root) => {
    const files = `${root}/files`;
    Deno.mkdirSync(files);
    Deno.mkdirSync(`${root}/other`);
    Deno.symlinkSync(`${root}/other`, `${files}/out`);
    Deno.writeTextFileSync(`${files}/f`, "x");
    assert.equal(await rule("files", files), FileRule.NOT_ABSOLUTE);
    assert.equal(await rule(`${root}/other`, files), FileRule.OUTSIDE);
    assert.equal(await rule(`${files}/../other`, files), FileRule.OUTSIDE);
    assert.equal(await rule(`${files}/out`, files), FileRule.OUTSIDE);
    assert.equal(await rule(`${files}/nope`, files), FileRule.NOT_FOUND);
    assert.equal(await rule(`${files}/f`, files), FileRule.NOT_DIRECTORY);
    assert.equal(await rule(files, `${root}/missing`), FileRule.NO_FILES_DIR);
  }, "outdir");
});
