import assert from "node:assert/strict";
import { encryptToPrv } from "../../src/prv/prv_encrypt.ts";
import { PrvError } from "../../src/prv/prv_errors.ts";
import { CHUNK_SIZE, HEADER_SIZE, TAG_SIZE } from "../../src/prv/prv_format.ts";
import {
  DECRYPTS_IN_FLIGHT,
  MAX_RUN_CHUNKS,
  openPrv,
  openPrvFile,
  openPrvWithHead,
  reopenPrv,
} from "../../src/prv/prv_reader.ts";
import { bytesSource, type PrvSource } from "../../src/prv/prv_source.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { encryptBytes, randomBytes, streamOf } from "./_prv.ts";

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
      if (position < HEADER_SIZE) chunksRead.push(-1);
      else {
        const full = C + TAG_SIZE;
        const firstChunk = (position - HEADER_SIZE) / full;
        for (let i = firstChunk; i < firstChunk + Math.ceil(length / full); i++) chunksRead.push(i);
      }
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

Deno.test("stream() reads chunk 0 alone, then runs of 16, two runs ahead, and stops on cancel", async () => {
  const source = countingSource(PRV);
  const reader = await openPrv(source, ENC.cek);
  source.chunksRead.length = 0;
  const r = reader.stream().getReader();
  assert.equal(source.chunksRead.length, 0, "nothing read before the first pull");
  const first = await r.read();
  assert.deepEqual(first.value, PLAIN.subarray(0, C));
  // Run [0] delivered, run [1 .. 4] in flight, read without the final chunk 4 (verified at open).
  assert.deepEqual(source.chunksRead, [0, 1, 2, 3]);
  const before = source.chunksRead.length;
  await r.cancel();
  assert.equal(source.chunksRead.length, before, "no reads after cancel");
  // A long file: runs of MAX_RUN_CHUNKS, and memory stays at two runs.
  const big = await encryptBytes(randomBytes(100 * C));
  const reads: number[] = [];
  const inner = bytesSource(big.prv);
  const counting: PrvSource = {
    size: inner.size,
    readAt: (p, n) => (reads.push(n), inner.readAt(p, n)),
  };
  const again = await openPrv(counting, big.enc.cek);
  reads.length = 0;
  let parts = 0;
  for await (const part of again.stream()) {
    assert.ok(part.byteLength <= C);
    parts++;
  }
  assert.equal(parts, 100);
  assert.equal(MAX_RUN_CHUNKS, 16);
  // 1 + 6 × 16 + 3 chunks; the last run without the final chunk.
  assert.deepEqual(reads.map((n) => Math.round(n / (C + TAG_SIZE))), [
    1,
    16,
    16,
    16,
    16,
    16,
    16,
    2,
  ]);
});

Deno.test("stream() keeps DECRYPTS_IN_FLIGHT chunk decryptions running at once, no more", async () => {
  const big = await encryptBytes(randomBytes(40 * C));
  const reader = await openPrv(bytesSource(big.prv), big.enc.cek);
  const subtle = crypto.subtle;
  const decrypt = subtle.decrypt;
  let running = 0;
  let most = 0;
  let calls = 0;
  Object.defineProperty(subtle, "decrypt", {
    configurable: true,
    value: async (...args: Parameters<SubtleCrypto["decrypt"]>) => {
      calls++;
      most = Math.max(most, ++running);
      try {
        return await decrypt.apply(subtle, args);
      } finally {
        running--;
      }
    },
  });
  try {
    let n = 0;
    for await (const part of reader.stream()) n += part.byteLength;
    assert.equal(n, 40 * C);
  } finally {
    delete (subtle as { decrypt?: unknown }).decrypt;
  }
  assert.equal(calls, 39, "every chunk but the final one, verified at open");
  assert.equal(most, DECRYPTS_IN_FLIGHT);
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
    // openPrv() also takes an opened file or bytes; the caller keeps the file.
    const again = await encryptToPrv(streamOf(PLAIN), PLAIN.byteLength, `${src}.2.prv`);
    using handle = await Deno.open(`${src}.2.prv`);
    const fromFile = await openPrv(handle, again.cek);
    assert.deepEqual(await fromFile.read(0, 100), PLAIN.subarray(0, 100));
    fromFile.close();
    assert.equal((await handle.stat()).size, again.prvSize, "still open after close()");
    const fromBytes = await openPrv(await Deno.readFile(`${src}.2.prv`), again.cek);
    assert.deepEqual(
      await fromBytes.read(PLAIN.byteLength - 5, PLAIN.byteLength),
      PLAIN.subarray(-5),
    );
    await assert.rejects(openPrvFile(`${dir}/missing.prv`, enc.cek), Deno.errors.NotFound);
  });
});

Deno.test("bytes handed out are the caller's: changing them does not change later reads", async () => {
  const reader = await openPrv(bytesSource(PRV), ENC.cek);
  const n = PLAIN.byteLength;
  const first = await reader.read(n - 10, n);
  first.fill(0);
  (await reader.decryptChunk(reader.chunkCount - 1)).fill(0);
  assert.deepEqual(await reader.read(n - 10, n), PLAIN.subarray(n - 10, n));
});

Deno.test("stream() options: onEnd once with the bytes and whether it was read to its end", async () => {
  const reader = await openPrv(bytesSource(PRV), ENC.cek);
  const ends: [number, boolean][] = [];
  const onEnd = (bytes: number, complete: boolean) => ends.push([bytes, complete]);
  const whole = new Uint8Array(await new Response(reader.stream({}, { onEnd })).arrayBuffer());
  assert.deepEqual(whole, PLAIN);
  assert.deepEqual(ends, [[PLAIN.byteLength, true]]);
  ends.length = 0;
  const r = reader.stream({ start: 10, end: 3 * C }, { onEnd }).getReader();
  assert.equal((await r.read()).value!.byteLength, C - 10);
  await r.cancel();
  await r.cancel();
  assert.deepEqual(ends, [[C - 10, false]]);
  ends.length = 0;
  await new Response(reader.stream({ start: 7, end: 7 }, { onEnd })).arrayBuffer();
  assert.deepEqual(ends, [[0, true]], "an empty range ends at once");
});

Deno.test("stream() options: an abort errors the stream with its reason and stops reading", async () => {
  const source = countingSource(PRV);
  const reader = await openPrv(source, ENC.cek);
  const ac = new AbortController();
  const ends: [number, boolean][] = [];
  const r = reader.stream({}, {
    signal: ac.signal,
    onEnd: (bytes, complete) => ends.push([bytes, complete]),
  }).getReader();
  assert.deepEqual((await r.read()).value, PLAIN.subarray(0, C));
  ac.abort(new Error("access to this file was revoked"));
  const read = source.chunksRead.length;
  await assert.rejects(() => r.read(), /revoked/);
  assert.deepEqual(ends, [[C, false]]);
  assert.equal(source.chunksRead.length, read, "no reads after the abort");
  // A signal aborted before the stream starts: it errors at once.
  const gone = reader.stream({}, { signal: ac.signal }).getReader();
  await assert.rejects(() => gone.read(), /revoked/);
});

Deno.test("reopenPrv() reads from what an open verified; every chunk is still authenticated", async () => {
  const verified = (await openPrv(bytesSource(PRV), ENC.cek)).verified;
  const source = countingSource(PRV);
  const reader = reopenPrv(source, verified);
  assert.deepEqual(source.chunksRead, [], "neither the header nor the final chunk read again");
  assert.equal(reader.plaintextLength, PLAIN.byteLength);
  assert.deepEqual(await reader.read(0, PLAIN.byteLength), PLAIN);
  assert.deepEqual(source.chunksRead, [0, 1, 2, 3, 4], "the final chunk too, when streamed");
  // A damaged chunk (or final chunk) fails as it is decrypted.
  for (const at of [HEADER_SIZE + C + TAG_SIZE + 5, PRV.byteLength - 3]) {
    const bad = PRV.slice();
    bad[at] ^= 1;
    const damaged = reopenPrv(bytesSource(bad), verified);
    await assert.rejects(() => damaged.read(0, PLAIN.byteLength), (e: Error) => {
      return e instanceof PrvError && e.reason === "chunk_auth_failed";
    });
  }
  // A size no .prv has.
  assert.throws(() => reopenPrv(bytesSource(PRV.subarray(0, HEADER_SIZE + 3)), verified), PrvError);
});

Deno.test("openPrvWithHead() decrypts chunk 0 at open and hands it to the first stream once", async () => {
  const source = countingSource(PRV);
  const subtle = crypto.subtle;
  const decrypt = subtle.decrypt;
  let calls = 0;
  Object.defineProperty(subtle, "decrypt", {
    configurable: true,
    value: (...args: Parameters<SubtleCrypto["decrypt"]>) => {
      calls++;
      return decrypt.apply(subtle, args);
    },
  });
  try {
    const { reader, head } = await openPrvWithHead(source, ENC.cek, 4100);
    assert.deepEqual(head, PLAIN.subarray(0, 4100));
    assert.deepEqual(source.chunksRead, [-1, 4], "chunk 0 came with the header");
    assert.equal(calls, 2, "the final chunk and chunk 0");
    source.chunksRead.length = 0;
    assert.deepEqual(await reader.read(0, PLAIN.byteLength), PLAIN);
    assert.deepEqual(source.chunksRead, [1, 2, 3], "neither chunk 0 nor the final chunk again");
    assert.equal(calls, 5);
    source.chunksRead.length = 0;
    assert.deepEqual(await reader.read(0, 10), PLAIN.subarray(0, 10), "handed over once");
    assert.deepEqual(source.chunksRead, [0]);
  } finally {
    delete (subtle as { decrypt?: unknown }).decrypt;
  }
});

Deno.test("openPrvWithHead() fails on a damaged chunk 0 or a wrong key; small files work", async () => {
  const bad = PRV.slice();
  bad[HEADER_SIZE + 100] ^= 1;
  await assert.rejects(openPrvWithHead(bytesSource(bad), ENC.cek, 4100), (e) => {
    return e instanceof PrvError && e.reason === "chunk_auth_failed";
  });
  const wrong = ENC.cek.slice();
  wrong[0] ^= 1;
  await assert.rejects(openPrvWithHead(bytesSource(PRV), wrong, 4100), (e) => {
    return e instanceof PrvError && e.reason === "header_auth_failed";
  });
  // One chunk (chunk 0 is the final chunk) and an empty file.
  for (const size of [5000, 0]) {
    const plain = randomBytes(size);
    const { prv, enc } = await encryptBytes(plain);
    const { reader, head } = await openPrvWithHead(bytesSource(prv), enc.cek, 4100);
    assert.deepEqual(head, plain.subarray(0, 4100));
    assert.deepEqual(await reader.read(0, size), plain);
  }
  // Closed without streaming: nothing kept.
  const { reader } = await openPrvWithHead(bytesSource(PRV), ENC.cek, 4100);
  reader.close();
  assert.deepEqual(await reader.read(0, 10), PLAIN.subarray(0, 10));
});
