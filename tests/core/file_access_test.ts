/**
 * Tests of the file rules with real directories, symlinks, hard links and a FIFO: only regular
 * files whose real path lies inside the files directory (or blobs, when allowed) are opened.
 */
import assert from "node:assert/strict";
import {
  type FileAccessRoots,
  FileRule,
  MACHINE_ID_PATH,
  openAttachableFile,
} from "../../src/core/file_access.ts";
import { withTempDir } from "../_helpers/temp.ts";

const USE = { method: "send_msg", verb: "sent" };
const BLOB = `${"ab".repeat(16)}.pdf`;

/** A data dir with the files dir inside (the default layout), state, blobs and an outside dir. */
async function layout(root: string) {
  const data = `${root}/data`;
  const files = `${data}/files`;
  const outside = `${root}/outside`;
  for (const d of [files, `${files}/sub`, `${data}/accounts/1/blobs`, `${outside}/dir`]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.writeTextFile(`${files}/ok.txt`, "allowed");
  await Deno.writeTextFile(`${files}/sub/deep.txt`, "deep");
  await Deno.writeTextFile(`${data}/accounts/1/gateway.db`, "SQLite keys");
  await Deno.writeTextFile(`${data}/license.json`, "{}");
  await Deno.writeTextFile(`${data}/accounts/1/blobs/${BLOB}`, "a stored file");
  await Deno.writeTextFile(`${data}/accounts/1/blobs/.import-x`, "half a copy");
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret");
  await Deno.writeTextFile(`${outside}/dir/inner.txt`, "inner");
  const roots: FileAccessRoots = { filesDir: files, dataDir: data };
  return {
    data,
    files,
    outside,
    roots,
    withBlobs: { ...roots, blobDir: `${data}/accounts/1/blobs` },
  };
}

/** Expects `path` refused by `rule`; returns the message. */
async function refused(
  path: string,
  roots: FileAccessRoots,
  rule: FileRule,
): Promise<string> {
  let message = "";
  await assert.rejects(openAttachableFile(path, roots, USE), (err: Error & { rule?: string }) => {
    assert.equal(err.rule, rule, `${path}: ${err.message}`);
    assert.equal((err as unknown as { code: number }).code, -1);
    message = err.message;
    return true;
  });
  return message;
}

Deno.test("openAttachableFile() opens a regular file inside the files directory", async () => {
  await withTempDir(async (root) => {
    const { files, roots } = await layout(root);
    for (
      const [path, text] of [[`${files}/ok.txt`, "allowed"], [`${files}/sub/deep.txt`, "deep"]]
    ) {
      await using f = await openAttachableFile(path, roots, USE);
      assert.equal(f.realPath, await Deno.realPath(path));
      assert.equal(f.size, text.length);
      assert.equal(new TextDecoder().decode(await f.readAll()), text);
    }
    await Deno.symlink("sub/deep.txt", `${files}/inner-link.txt`);
    await using linked = await openAttachableFile(`${files}/inner-link.txt`, roots, USE);
    assert.equal(linked.name, "inner-link.txt", "the name is the one the caller gave");
    assert.equal(linked.realPath, await Deno.realPath(`${files}/sub/deep.txt`));
  });
});

Deno.test("readAt() reads the checked file at offsets into the caller's buffer, 0 at the end", async () => {
  await withTempDir(async (root) => {
    const { files, roots } = await layout(root);
    await using f = await openAttachableFile(`${files}/ok.txt`, roots, USE);
    const buf = new Uint8Array(4);
    assert.equal(await f.readAt(buf, 3), 4);
    assert.equal(new TextDecoder().decode(buf), "owed");
    assert.equal(await f.readAt(buf, 5), 2, "short at the end");
    assert.equal(await f.readAt(buf, 7), 0);
  });
});

Deno.test("openAttachableFile() reads the file it checked, even when the path is replaced", async () => {
  await withTempDir(async (root) => {
    const { files, outside, roots } = await layout(root);
    await using f = await openAttachableFile(`${files}/ok.txt`, roots, USE);
    await Deno.remove(`${files}/ok.txt`);
    await Deno.symlink(`${outside}/secret.txt`, `${files}/ok.txt`);
    assert.equal(new TextDecoder().decode(await f.readAll()), "allowed");
  });
});

Deno.test("symlinks to files and directories outside the files directory are refused", async () => {
  await withTempDir(async (root) => {
    const { files, outside, roots } = await layout(root);
    await Deno.symlink(`${outside}/secret.txt`, `${files}/secret.txt`);
    await Deno.symlink(`${outside}/dir`, `${files}/dir`);
    await Deno.symlink("/etc/shadow", `${files}/shadow`);
    await Deno.symlink("/etc", `${files}/etc`);
    await Deno.symlink("/root", `${files}/root`);
    await Deno.symlink("/dev/zero", `${files}/zero`);
    assert.equal(
      await refused(`${files}/secret.txt`, roots, FileRule.OUTSIDE),
      `send_msg: "${files}/secret.txt" leads outside the files directory ${files} through a ` +
        "symbolic link (only regular files there may be sent)",
    );
    for (
      const p of ["dir/inner.txt", "shadow", "etc/shadow", "etc/passwd", "root", "zero"]
    ) {
      await refused(`${files}/${p}`, roots, FileRule.OUTSIDE);
    }
    await refused(`${files}/etc`, roots, FileRule.OUTSIDE);
  });
});

Deno.test("paths outside, `..` and encoded variants are refused with the rule and the directory", async () => {
  await withTempDir(async (root) => {
    const { files, outside, roots } = await layout(root);
    assert.equal(
      await refused(`${outside}/secret.txt`, roots, FileRule.OUTSIDE),
      `send_msg: "${outside}/secret.txt" is not inside the files directory ${files} ` +
        "(only regular files there may be sent)",
    );
    await refused("/etc/passwd", roots, FileRule.OUTSIDE);
    await refused(`/${files}/../../outside/secret.txt`, roots, FileRule.OUTSIDE);
    await refused(`${files}/sub/../../../outside/secret.txt`, roots, FileRule.OUTSIDE);
    await refused(`${outside}/missing.txt`, roots, FileRule.OUTSIDE);
    for (const p of ["%2e%2e/license.json", "..%2f..%2foutside/secret.txt", "%2E%2E%2Fetc"]) {
      await refused(`${files}/${p}`, roots, FileRule.NOT_FOUND);
    }
    assert.equal(
      await refused(`${files}/missing.txt`, roots, FileRule.NOT_FOUND),
      `send_msg: "${files}/missing.txt" does not exist (only regular files inside the files ` +
        `directory ${files} may be sent)`,
    );
    await refused(`${files}/ok.txt/x`, roots, FileRule.NOT_FOUND);
    assert.equal(
      await refused("ok.txt", roots, FileRule.NOT_ABSOLUTE),
      `send_msg: "ok.txt" is not an absolute path; give the absolute path of a file inside ` +
        `the files directory ${files}`,
    );
    await refused(`file://${files}/ok.txt`, roots, FileRule.NOT_ABSOLUTE);
    await refused(`./files/ok.txt`, roots, FileRule.NOT_ABSOLUTE);
    await refused(`${files}/ok.txt\0`, roots, FileRule.NOT_ABSOLUTE);
  });
});

Deno.test("the data directory's own state is never opened, directly or through a link", async () => {
  await withTempDir(async (root) => {
    const { data, files, roots, withBlobs } = await layout(root);
    const db = `${data}/accounts/1/gateway.db`;
    assert.equal(
      await refused(db, roots, FileRule.GATEWAY_STATE),
      `send_msg: "${db}" is the gateway's own state in its data directory ${data} and is never ` +
        `sent (only regular files inside the files directory ${files} may be sent)`,
    );
    await Deno.symlink(db, `${files}/db`);
    await Deno.symlink(`${data}/accounts`, `${files}/accounts`);
    await Deno.symlink(data, `${files}/data`);
    assert.match(
      await refused(`${files}/db`, roots, FileRule.GATEWAY_STATE),
      /"[^"]+\/files\/db" leads to the gateway's own state/,
    );
    await refused(`${files}/accounts/1/gateway.db`, roots, FileRule.GATEWAY_STATE);
    await refused(`${files}/data/license.json`, roots, FileRule.GATEWAY_STATE);
    await refused(`${files}/../license.json`, roots, FileRule.GATEWAY_STATE);
    await refused(`${data}/license.json`, withBlobs, FileRule.GATEWAY_STATE);
    await refused(data, roots, FileRule.GATEWAY_STATE);
    await refused(`${files}/data`, roots, FileRule.GATEWAY_STATE);
    assert.equal(
      await refused(files, roots, FileRule.DIRECTORY),
      `send_msg: "${files}" is a directory (only regular files inside the files directory ` +
        `${files} may be sent)`,
    );
    await refused(`${files}/sub`, roots, FileRule.DIRECTORY);
  });
});

Deno.test("blobs are opened only when the caller allows them, and only real blob names", async () => {
  await withTempDir(async (root) => {
    const { data, files, roots, withBlobs } = await layout(root);
    const blob = `${data}/accounts/1/blobs/${BLOB}`;
    await using f = await openAttachableFile(blob, withBlobs, USE);
    assert.equal(new TextDecoder().decode(await f.readAll()), "a stored file");
    await refused(blob, roots, FileRule.GATEWAY_STATE);
    await refused(`${data}/accounts/1/blobs/.import-x`, withBlobs, FileRule.GATEWAY_STATE);
    assert.match(
      await refused(`${root}/elsewhere`, withBlobs, FileRule.OUTSIDE),
      new RegExp(`\\(only regular files there, or files of stored messages, may be sent\\)$`),
    );
    await Deno.symlink(blob, `${files}/forward.pdf`);
    await using forwarded = await openAttachableFile(`${files}/forward.pdf`, withBlobs, USE);
    assert.equal(forwarded.size, "a stored file".length);
  });
});

Deno.test("a FIFO is refused without being opened (no hang), also through a symlink", async () => {
  await withTempDir(async (root) => {
    const { files, roots } = await layout(root);
    const made = await new Deno.Command("mkfifo", { args: [`${files}/pipe`] }).output();
    assert.equal(made.code, 0);
    await Deno.symlink("pipe", `${files}/pipe-link`);
    assert.equal(
      await refused(`${files}/pipe`, roots, FileRule.NOT_REGULAR),
      `send_msg: "${files}/pipe" is a FIFO (named pipe), not a regular file (only regular ` +
        `files inside the files directory ${files} may be sent)`,
    );
    await refused(`${files}/pipe-link`, roots, FileRule.NOT_REGULAR);
  });
});

Deno.test("a hard link is refused: it cannot be told apart from a file outside", async () => {
  await withTempDir(async (root) => {
    const { files, outside, roots } = await layout(root);
    await Deno.link(`${outside}/secret.txt`, `${files}/hard.txt`);
    assert.equal(
      await refused(`${files}/hard.txt`, roots, FileRule.HARD_LINKS),
      `send_msg: "${files}/hard.txt" has 2 hard links; a file with more than one link cannot ` +
        `be told apart from a link to a file outside the files directory ${files}, so it is ` +
        "never sent; copy it there instead of linking it (only regular files there may be sent)",
    );
    await Deno.link(`${files}/ok.txt`, `${files}/ok-twice.txt`);
    await refused(`${files}/ok.txt`, roots, FileRule.HARD_LINKS);
  });
});

Deno.test("the device identity file is never opened, even from a files directory holding it", async () => {
  await withTempDir(async (root) => {
    const { files, roots } = await layout(root);
    let exists = true;
    await Deno.stat(MACHINE_ID_PATH).catch(() => exists = false);
    if (!exists) return;
    await Deno.symlink(MACHINE_ID_PATH, `${files}/id`);
    assert.match(
      await refused(MACHINE_ID_PATH, roots, FileRule.DEVICE_IDENTITY),
      /"\/etc\/machine-id" is the device identity \/etc\/machine-id and is never sent/,
    );
    await refused(`${files}/id`, roots, FileRule.DEVICE_IDENTITY);
    await refused(
      MACHINE_ID_PATH,
      { filesDir: "/etc", dataDir: `${root}/data` },
      FileRule.DEVICE_IDENTITY,
    );
  });
});

Deno.test("a files directory that is, holds or lies in the data dir's state exposes none of it", async () => {
  await withTempDir(async (root) => {
    const { data, outside } = await layout(root);
    const db = `${data}/accounts/1/gateway.db`;
    await refused(db, { filesDir: data, dataDir: data }, FileRule.GATEWAY_STATE);
    await refused(
      `${data}/license.json`,
      { filesDir: data, dataDir: data },
      FileRule.GATEWAY_STATE,
    );
    await refused(db, { filesDir: root, dataDir: data }, FileRule.GATEWAY_STATE);
    await refused(db, { filesDir: `${data}/accounts`, dataDir: data }, FileRule.GATEWAY_STATE);
    await Deno.symlink(data, `${outside}/files-alias`);
    await refused(
      db,
      { filesDir: `${outside}/files-alias`, dataDir: data },
      FileRule.GATEWAY_STATE,
    );
    await using ok = await openAttachableFile(`${outside}/secret.txt`, {
      filesDir: outside,
      dataDir: data,
    }, USE);
    assert.equal(ok.size, "secret".length);
  });
});

Deno.test("a missing files directory is named in the error", async () => {
  await withTempDir(async (root) => {
    const roots = { filesDir: `${root}/nope`, dataDir: root };
    await assert.rejects(openAttachableFile(`${root}/nope/x.txt`, roots, USE), {
      code: -1,
      rule: FileRule.NO_FILES_DIR,
      message: `send_msg: the files directory ${root}/nope does not exist; create it and put ` +
        "the files to be sent there",
    });
  });
});
