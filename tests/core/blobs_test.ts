/** Tests of the blob directory: copies that never touch the source, names, dedup, errors. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  adoptSpooled,
  attachmentSink,
  baseName,
  blobName,
  blobPath,
  extensionOf,
  importFile,
  isBlobName,
  mimeOf,
  ReceiveTemp,
  removeBlob,
  removeReceiveLeftovers,
  writeBlob,
} from "../../src/core/blobs.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { attach } from "./_messaging.ts";

Deno.test("importFile() copies an opened file into the blob dir and leaves it as it was", async () => {
  await withTempDir(async (dir) => {
    const src = `${dir}/Report 2026.PDF`;
    const data = new TextEncoder().encode("%PDF-1.7 test");
    await Deno.writeFile(src, data);
    await Deno.chmod(src, 0o444);
    const before = await Deno.stat(src);
    await using file = await attach(src);
    const blob = await importFile(`${dir}/blobs`, file.chunks(), file.name);
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
    const again = await importFile(`${dir}/blobs`, file.chunks(), "other.pdf");
    assert.equal(again.blob, blob.blob, "same content and extension → same blob");
    assert.equal(again.name, "other.pdf");
    const names = [...Deno.readDirSync(`${dir}/blobs`)].map((e) => e.name);
    assert.deepEqual(names, [blob.blob], "no temp files are left behind");
  });
});

Deno.test("importFile() reads large content in order and leaves no temp file on failure", async () => {
  await withTempDir(async (dir) => {
    const data = Uint8Array.from({ length: 600_000 }, (_, i) => (i * 7 + (i >> 9)) & 255);
    await Deno.writeFile(`${dir}/big.bin`, data);
    await using file = await attach(`${dir}/big.bin`);
    const blob = await importFile(`${dir}/blobs`, file.chunks(), file.name);
    assert.deepEqual(await Deno.readFile(blob.path), data);
    assert.equal(file.size, data.byteLength);
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array([1]);
      throw new Error("read failed");
    }
    await assert.rejects(importFile(`${dir}/blobs`, failing(), "x.bin"), /read failed/);
    const names = [...Deno.readDirSync(`${dir}/blobs`)].map((e) => e.name);
    assert.deepEqual(names, [blob.blob], "the temp file is removed");
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
  assert.equal(isBlobName(`${"ab".repeat(16)}.pdf`), true);
  assert.equal(isBlobName(".import-123"), false);
});

Deno.test("attachmentSink() hides a received file until adoptSpooled() names it by its hash", async () => {
  await withTempDir(async (dir) => {
    const blobs = `${dir}/blobs`;
    const sink = attachmentSink(blobs);
    await sink.write(new TextEncoder().encode("hello "));
    await sink.write(new TextEncoder().encode("file"));
    const { spooled } = await sink.end();
    assert.equal(spooled!.bytes, 10);
    assert.equal(spooled!.sha256, createHash("sha256").update("hello file").digest("hex"));
    assert.ok(baseName(spooled!.path).startsWith(ReceiveTemp.ATTACHMENT));
    const blob = await adoptSpooled(blobs, spooled!, "note.txt", "text/plain");
    assert.equal(blob.blob, `${spooled!.sha256.slice(0, 32)}.txt`);
    assert.equal(await Deno.readTextFile(blob.path), "hello file");
    assert.deepEqual([...Deno.readDirSync(blobs)].map((e) => e.name), [blob.blob]);
  });
});

Deno.test("attachmentSink().abort() and removeReceiveLeftovers() leave no temp file", async () => {
  await withTempDir(async (dir) => {
    const blobs = `${dir}/blobs`;
    const sink = attachmentSink(blobs);
    await sink.write(new Uint8Array(10));
    await sink.abort();
    assert.deepEqual([...Deno.readDirSync(blobs)], []);
    await Deno.writeFile(`${blobs}/${ReceiveTemp.MAIL}x`, new Uint8Array(1));
    await Deno.writeFile(`${blobs}/${ReceiveTemp.CIPHERTEXT}y`, new Uint8Array(1));
    await Deno.writeFile(`${blobs}/${ReceiveTemp.ATTACHMENT}z`, new Uint8Array(1));
    await Deno.writeFile(`${blobs}/${"a".repeat(32)}.txt`, new Uint8Array(1));
    assert.equal(await removeReceiveLeftovers(blobs), 3);
    assert.deepEqual([...Deno.readDirSync(blobs)].map((e) => e.name), [`${"a".repeat(32)}.txt`]);
    assert.equal(await removeReceiveLeftovers(`${dir}/none`), 0);
  });
});
