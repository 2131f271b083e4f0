import assert from "node:assert/strict";
import { encryptToPrv } from "../../src/protected_files/prv_encrypt.ts";
import { PrvError } from "../../src/protected_files/prv_errors.ts";
import { CHUNK_SIZE, HEADER_SIZE, TAG_SIZE } from "../../src/protected_files/prv_format.ts";
import { openPrv, openPrvFile } from "../../src/protected_files/prv_reader.ts";
import { bytesSource, type PrvSource } from "../../src/protected_files/prv_source.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { encryptBytes, randomBytes } from "./_prv.ts";

const C = CHUNK_SIZE;
const PLAIN = randomBytes(4 * C + 777);
const { prv: PRV, enc: ENC } = await encryptBytes(PLAIN);

/** A bytes source that records which chunk each read touched (-1: the header). */
function countingSource(bytes: Uint8Array): PrvSource & { chunksRead: number[] } {
  const inner = bytesSource(bytes);
  const chunksRead: number[] = [];
  return {
    size: inner.size,
    chunksRead,
    readAt(position, length) {
      chunksRead.push(position < HEADER_SIZE ? -1 : (position - HEADER_SIZE) / (C + TAG_SIZE));
      return inner.readAt(position, length);
    },
  };
}

Deno.test("openPrv() reads only the header and the final chunk", async () => {
  const source = countingSource(PRV);
  const reader = await openPrv(source, ENC.cek);
  assert.deepEqual(source.chunksRead, [-1, 4]);
  assert.equal(reader.plaintextLength, PLAIN.byteLength);
  assert.equal(reader.chunkCount, 5);
});

Deno.test("range reads at chunk boundaries and the last byte return the right bytes", async () => {
  const reader = await openPrv(bytesSource(PRV), ENC.cek);
  const n = PLAIN.byteLength;
  const ranges: [number, number][] = [
    [0, 1],
    [0, C],
    [C - 1, C],
    [C - 1, C + 1],
    [C, C + 1],
    [C, 2 * C],
    [C + 5, 3 * C + 9],
    [4 * C, n],
    [n - 1, n],
    [0, n],
    [7, 7],
  ];
  for (const [start, end] of ranges) {
    assert.deepEqual(
      await reader.read(start, end),
      PLAIN.subarray(start, end),
      `[${start}, ${end})`,
    );
  }
  assert.throws(() => reader.stream({ start: 0, end: n + 1 }), RangeError);
  assert.throws(() => reader.stream({ start: 5, end: 4 }), RangeError);
});

Deno.test("a range decrypts only the chunks it touches", async () => {
  const source = countingSource(PRV);
  const reader = await openPrv(source, ENC.cek);
  source.chunksRead.length = 0;
  await reader.read(2 * C + 10, 3 * C + 10);
  assert.deepEqual(source.chunksRead, [2, 3]);
  source.chunksRead.length = 0;
  await reader.read(0, 4100); // a content-type sniff: chunk 0 only
  assert.deepEqual(source.chunksRead, [0]);
  source.chunksRead.length = 0;
  await reader.read(PLAIN.byteLength - 1, PLAIN.byteLength); // the final chunk was verified at open
  assert.deepEqual(source.chunksRead, []);
});

Deno.test("stream() stays at most readAhead chunks ahead of its consumer and stops on cancel", async () => {
  const source = countingSource(PRV);
  const reader = await openPrv(source, ENC.cek);
  source.chunksRead.length = 0;
  const r = reader.stream({}, 2).getReader();
  assert.equal(source.chunksRead.length, 0, "nothing read before the first pull");
  const first = await r.read();
  assert.deepEqual(first.value, PLAIN.subarray(0, C));
  assert.ok(source.chunksRead.length <= 3, `read ${source.chunksRead} after one chunk`);
  const before = source.chunksRead.length;
  await r.cancel();
  assert.equal(source.chunksRead.length, before, "no reads after cancel");
});

Deno.test("stream() errors with PrvError when a chunk in the range is damaged", async () => {
  const bad = PRV.slice();
  bad[HEADER_SIZE + 2 * (C + TAG_SIZE) + 3] ^= 4;
  const reader = await openPrv(bytesSource(bad), ENC.cek);
  const r = reader.stream().getReader();
  assert.deepEqual((await r.read()).value, PLAIN.subarray(0, C));
  assert.deepEqual((await r.read()).value, PLAIN.subarray(C, 2 * C));
  await assert.rejects(r.read(), (e) => e instanceof PrvError && e.reason === "chunk_auth_failed");
});

Deno.test("openPrvFile() reads a .prv from disk and closes it; a file cut after open is 'truncated'", async () => {
  await withTempDir(async (dir) => {
    const src = `${dir}/report.csv`;
    await Deno.writeFile(src, PLAIN);
    using file = await Deno.open(src);
    const enc = await encryptToPrv(file, PLAIN.byteLength, `${src}.prv`);
    {
      await using reader = await openPrvFile(`${src}.prv`, enc.cek);
      assert.deepEqual(await reader.read(C - 3, 3 * C), PLAIN.subarray(C - 3, 3 * C));
      // Cut the file under the open reader: reads past the new end are refused.
      await Deno.truncate(`${src}.prv`, HEADER_SIZE + C + TAG_SIZE + 100);
      await assert.rejects(
        reader.read(3 * C, 3 * C + 1),
        (e) => e instanceof PrvError && e.reason === "truncated",
      );
    }
    await assert.rejects(openPrvFile(`${src}.prv`, enc.cek), PrvError);
    await assert.rejects(openPrvFile(`${dir}/missing.prv`, enc.cek), Deno.errors.NotFound);
  });
});
