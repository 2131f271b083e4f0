/** Tests of the blob directory: copies that never touch the source, names, dedup, errors. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  blobName,
  blobPath,
  extensionOf,
  importFile,
  mimeOf,
  removeBlob,
  statRegularFile,
  writeBlob,
} from "../../src/core/blobs.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("importFile() copies into the blob dir and leaves the source as it was", async () => {
  await withTempDir(async (dir) => {
    const src = `${dir}/Report 2026.PDF`;
    const data = new TextEncoder().encode("%PDF-1.7 test");
    await Deno.writeFile(src, data);
    await Deno.chmod(src, 0o444);
    const before = await Deno.stat(src);
    const blob = await importFile(`${dir}/blobs`, src);
    const hash = createHash("sha256").update(data).digest("hex");
    assert.equal(blob.blob, `${hash.slice(0, 32)}.pdf`);
    assert.equal(blob.path, `${dir}/blobs/${blob.blob}`);
    assert.equal(blob.name, "Report 2026.PDF");
    assert.equal(blob.mime, "application/pdf");
    assert.equal(blob.bytes, data.byteLength);
    assert.deepEqual(await Deno.readFile(blob.path), data);
    const after = await Deno.stat(src);
    assert.deepEqual(await Deno.readFile(src), data, "source bytes unchanged");
    assert.equal(after.mtime?.getTime(), before.mtime?.getTime(), "source not rewritten");
    assert.equal(after.ino, before.ino, "source not moved");
    const again = await importFile(`${dir}/blobs`, src, "other.pdf");
    assert.equal(again.blob, blob.blob, "same content and extension → same blob");
    assert.equal(again.name, "other.pdf");
    const names = [...Deno.readDirSync(`${dir}/blobs`)].map((e) => e.name);
    assert.deepEqual(names, [blob.blob], "no temp files are left behind");
  });
});

Deno.test("importFile() and statRegularFile() say what is wrong with the path", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(importFile(`${dir}/b`, `${dir}/nope.txt`), {
      code: -1,
      message: `Cannot read file "${dir}/nope.txt": file does not exist`,
    });
    await assert.rejects(statRegularFile(dir), {
      message: `Cannot read file "${dir}": it is a directory`,
    });
  });
});

Deno.test("writeBlob() stores received bytes once; removeBlob() deletes by blob name only", async () => {
  await withTempDir(async (dir) => {
    const data = new Uint8Array([1, 2, 3]);
    const a = await writeBlob(dir, data, "x.prv");
    const b = await writeBlob(dir, data, "y.prv");
    assert.equal(a.blob, b.blob);
    assert.equal(a.mime, "application/octet-stream");
    assert.equal(await removeBlob(dir, a.blob), true);
    assert.equal(await removeBlob(dir, a.blob), false);
    await assert.rejects(removeBlob(dir, "../etc/passwd"), /not a blob file name/);
    assert.throws(() => blobPath(dir, "a/b"), /not a blob file name/);
  });
});

Deno.test("blob names and MIME types follow the extension", () => {
  assert.equal(blobName("ab".repeat(32), "a.tar.GZ"), `${"ab".repeat(16)}.gz`);
  assert.equal(blobName("ab".repeat(32), "README"), "ab".repeat(16));
  assert.equal(extensionOf(".hidden"), "");
  assert.equal(extensionOf("x.we!rd"), "");
  assert.equal(mimeOf("photo.JPG"), "image/jpeg");
  assert.equal(mimeOf("secret.pdf.prv"), "application/octet-stream");
});
