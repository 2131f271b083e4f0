/**
 * The backup file format: a round trip, and each way a file can be wrong (wrong passphrase, cut
 * at several points, a flipped byte, reordered chunks, appended data) refused with its reason.
 */
import assert from "node:assert/strict";
import { BackupError, BackupFault } from "../../src/backup/errors.ts";
import { HEADER_BYTES } from "../../src/backup/header.ts";
import {
  type ByteSource,
  SealedReader,
  SealedWriter,
  TAG_BYTES,
} from "../../src/backup/sealed_stream.ts";
import { TEST_KDF } from "./_backup_fixture.ts";

const CHUNK = 32;
const RECORD = CHUNK + TAG_BYTES;

async function seal(
  plain: Uint8Array,
  pass = "correct horse",
  kdf = TEST_KDF,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const w = await SealedWriter.create(
    { write: (b) => Promise.resolve(void parts.push(b.slice())) },
    pass,
    { kdf, chunkBytes: CHUNK },
  );
  // Odd write sizes, so chunks are cut across writes.
  for (let at = 0; at < plain.length; at += 7) await w.write(plain.subarray(at, at + 7));
  await w.close();
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), at += p.length);
  return out;
}

function sourceOf(bytes: Uint8Array): ByteSource {
  let at = 0;
  return {
    read(into) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(into.length, bytes.length - at, 5); // short reads too
      into.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

async function unseal(file: Uint8Array, pass = "correct horse"): Promise<Uint8Array> {
  const r = await SealedReader.open(sourceOf(file), pass, "test.bak");
  const parts: number[] = [];
  for await (const c of r.chunks()) parts.push(...c);
  return new Uint8Array(parts);
}

async function fault(file: Uint8Array, pass?: string): Promise<BackupFault> {
  try {
    await unseal(file, pass);
  } catch (err) {
    if (err instanceof BackupError) return err.fault;
    throw err;
  }
  assert.fail("the file was accepted");
}

const PLAIN = new Uint8Array(100).map((_, i) => i); // 4 chunks: 32, 32, 32, 4 (final)

Deno.test("a sealed stream round-trips, also empty and exactly one full chunk", async () => {
  assert.deepEqual(await unseal(await seal(PLAIN)), PLAIN);
  assert.deepEqual(await unseal(await seal(new Uint8Array())), new Uint8Array());
  const full = new Uint8Array(CHUNK).fill(9);
  const sealed = await seal(full);
  assert.equal(sealed.length, HEADER_BYTES + RECORD); // the full chunk is the final one
  assert.deepEqual(await unseal(sealed), full);
});

Deno.test("the default Argon2id cost round-trips and is recorded in the header", async () => {
  const sealed = await seal(PLAIN, "pw", { memoryKiB: 65536, iterations: 3, parallelism: 1 });
  const view = new DataView(sealed.buffer);
  assert.equal(view.getUint32(12), 65536);
  assert.equal(view.getUint32(16), 3);
  assert.deepEqual(await unseal(sealed, "pw"), PLAIN);
});

Deno.test("a wrong passphrase is refused as such, before any chunk is read", async () => {
  const sealed = await seal(PLAIN);
  assert.equal(await fault(sealed, "wrong horse"), BackupFault.WRONG_PASSPHRASE);
  await assert.rejects(
    () => unseal(sealed, "wrong horse"),
    /wrong passphrase for backup test\.bak/,
  );
});

Deno.test("a file cut anywhere is refused: in the header, at a chunk boundary, inside a chunk", async () => {
  const sealed = await seal(PLAIN);
  const cuts: [number, BackupFault][] = [
    [0, BackupFault.NOT_A_BACKUP],
    [4, BackupFault.TRUNCATED],
    [HEADER_BYTES - 1, BackupFault.TRUNCATED],
    [HEADER_BYTES, BackupFault.TRUNCATED],
    [HEADER_BYTES + 10, BackupFault.TRUNCATED],
    [HEADER_BYTES + RECORD, BackupFault.TRUNCATED],
    [HEADER_BYTES + 3 * RECORD, BackupFault.TRUNCATED],
    [HEADER_BYTES + RECORD + 20, BackupFault.DAMAGED],
    [sealed.length - 1, BackupFault.DAMAGED],
  ];
  for (const [at, expected] of cuts) {
    assert.equal(await fault(sealed.slice(0, at)), expected, `cut at ${at}`);
  }
});

Deno.test("a flipped byte anywhere after the magic is refused", async () => {
  const sealed = await seal(PLAIN);
  for (
    const at of [
      11,
      14,
      30,
      HEADER_BYTES - 1,
      HEADER_BYTES,
      HEADER_BYTES + RECORD + 3,
      sealed.length - 1,
    ]
  ) {
    const bad = sealed.slice();
    bad[at] ^= 0x01;
    const got = await fault(bad);
    // Salt, cost or check changed: the passphrase no longer opens it; else a chunk fails.
    assert.ok(
      [BackupFault.DAMAGED, BackupFault.WRONG_PASSPHRASE, BackupFault.NOT_A_BACKUP].includes(
        got as never,
      ),
      `byte ${at}: ${got}`,
    );
    if (at >= HEADER_BYTES) assert.equal(got, BackupFault.DAMAGED, `byte ${at}`);
  }
});

Deno.test("swapped chunks and appended or duplicated chunks are refused", async () => {
  const sealed = await seal(PLAIN);
  const head = sealed.subarray(0, HEADER_BYTES);
  const rec = (i: number) =>
    sealed.subarray(HEADER_BYTES + i * RECORD, HEADER_BYTES + (i + 1) * RECORD);
  const tail = sealed.subarray(HEADER_BYTES + 3 * RECORD);
  const join = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) (out.set(p, at), at += p.length);
    return out;
  };
  assert.equal(await fault(join(head, rec(1), rec(0), rec(2), tail)), BackupFault.DAMAGED);
  assert.equal(await fault(join(head, rec(0), rec(1), rec(1), rec(2), tail)), BackupFault.DAMAGED);
  assert.equal(await fault(join(head, rec(0), rec(2), tail)), BackupFault.DAMAGED);
  assert.equal(await fault(join(sealed, new Uint8Array([1, 2, 3]))), BackupFault.DAMAGED);
  // Another file's header on this file's chunks (same passphrase, other salt): refused.
  const other = await seal(PLAIN);
  assert.notEqual(
    await fault(join(other.subarray(0, HEADER_BYTES), sealed.subarray(HEADER_BYTES))),
    undefined,
  );
});

Deno.test("a header asking for more memory than a 512 MB box can spare is refused unread", async () => {
  const sealed = await seal(PLAIN);
  new DataView(sealed.buffer).setUint32(12, 4 * 1024 * 1024); // 4 GiB
  assert.equal(await fault(sealed), BackupFault.DAMAGED);
  await assert.rejects(() => unseal(sealed), /asks for Argon2id with 4194304 KiB/);
});
