import assert from "node:assert/strict";
import {
  EARLY_FLUSH_BYTES,
  earlyFlushingWriter,
  writeFileAtomicallyThen,
} from "../../src/prv/atomic_file.ts";
import { withTempDir } from "../_helpers/temp.ts";

/** A stand-in for an opened file that records writes and flushes. */
function fakeFile(syncFails = false) {
  const log: string[] = [];
  let release: (() => void) | undefined;
  const file = {
    write: (b: Uint8Array) => (log.push(`write ${b.byteLength}`), Promise.resolve(b.byteLength)),
    syncData: () => {
      log.push("sync");
      return new Promise<void>((resolve, reject) => {
        release = () => syncFails ? reject(new Error("EIO: flush failed")) : resolve();
      });
    },
  };
  return { file: file as unknown as Deno.FsFile, log, finishSync: () => release?.() };
}

Deno.test("earlyFlushingWriter() starts one background flush per `every` bytes, one at a time", async () => {
  const { file, log, finishSync } = fakeFile();
  const w = earlyFlushingWriter(file, () => file.syncData(), 100);
  await w.write(new Uint8Array(60));
  await w.write(new Uint8Array(60)); // 120 bytes: a flush starts, not awaited
  await w.write(new Uint8Array(150)); // the first is still running: no second one
  assert.deepEqual(log, ["write 60", "write 60", "sync", "write 150"]);
  finishSync();
  await w.settle();
  await w.write(new Uint8Array(100));
  assert.deepEqual(log.slice(4), ["write 100", "sync"]);
  finishSync();
  await w.settle();
});

Deno.test("a failed early flush is reported by the next write and by settle()", async () => {
  const { file, finishSync } = fakeFile(true);
  const w = earlyFlushingWriter(file, () => file.syncData(), 10);
  await w.write(new Uint8Array(10));
  finishSync();
  await assert.rejects(w.settle(), /EIO/);
  await assert.rejects(w.write(new Uint8Array(1)), /EIO/);
});

Deno.test("writeFileAtomicallyThen(): a failing finish leaves no file; a good one renames", async () => {
  await withTempDir(async (dir) => {
    const dest = `${dir}/out.bin`;
    await assert.rejects(
      writeFileAtomicallyThen(
        dest,
        (_file, write) => write(new Uint8Array(1000)),
        () => Promise.reject(new Error("digest failed")),
      ),
      /digest failed/,
    );
    assert.deepEqual([...Deno.readDirSync(dir)], []);
    const order: string[] = [];
    const result = await writeFileAtomicallyThen(
      dest,
      async (_file, write) => {
        await write(new Uint8Array([1, 2, 3]));
        order.push("written");
        return 3;
      },
      async (n) => {
        order.push("finish");
        await Promise.resolve();
        const exists = await Deno.stat(dest).then(() => true, () => false);
        assert.equal(exists, false, "renamed only after finish");
        return n * 2;
      },
    );
    assert.equal(result, 6);
    assert.deepEqual(order, ["written", "finish"]);
    assert.deepEqual(await Deno.readFile(dest), new Uint8Array([1, 2, 3]));
  });
});

Deno.test("early flushes run through the given flush, never on the writing handle", async () => {
  const { file, log, finishSync } = fakeFile();
  const writing = {
    write: file.write,
    syncData: () => Promise.reject(new Error("flushed on the writing handle")),
  } as unknown as Deno.FsFile;
  const w = earlyFlushingWriter(writing, () => file.syncData(), 10);
  await w.write(new Uint8Array(10));
  await w.write(new Uint8Array(10)); // not held up by the flush still running
  assert.deepEqual(log, ["write 10", "sync", "write 10"]);
  finishSync();
  await w.settle();
});

Deno.test("writeFileAtomicallyThen(): a file past several early flushes is whole, handles closed", async () => {
  await withTempDir(async (dir) => {
    const dest = `${dir}/big.bin`;
    const part = new Uint8Array(1 << 20);
    const parts = (3 * EARLY_FLUSH_BYTES) / part.byteLength + 1;
    await writeFileAtomicallyThen(dest, async (_file, write) => {
      for (let i = 0; i < parts; i++) await write(part.fill(i));
    }, () => Promise.resolve());
    const got = await Deno.readFile(dest);
    assert.equal(got.byteLength, parts * part.byteLength);
    for (let i = 0; i < parts; i++) assert.equal(got[i * part.byteLength], i & 0xff);
    // A failure after early flushes: no file, and (test sanitizers) no handle left open.
    await assert.rejects(
      writeFileAtomicallyThen(`${dir}/other.bin`, async (_file, write) => {
        for (let i = 0; i < parts; i++) await write(part);
      }, () => Promise.reject(new Error("digest failed"))),
      /digest failed/,
    );
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["big.bin"]);
  });
});

Deno.test("idle() says whether settle() has anything to wait for", async () => {
  const { file, finishSync } = fakeFile(true);
  const w = earlyFlushingWriter(file, () => file.syncData(), 10);
  assert.equal(w.idle(), true);
  await w.write(new Uint8Array(10)); // a flush starts
  assert.equal(w.idle(), false);
  finishSync(); // and fails
  await assert.rejects(w.settle(), /EIO/);
  assert.equal(w.idle(), false, "a failure is still to be reported");
});
