import assert from "node:assert/strict";
import { encryptPrv } from "../../src/prv/prv_encrypt.ts";
import { PrvSourceError } from "../../src/prv/prv_errors.ts";
import { CHUNK_SIZE, layoutForPlaintext } from "../../src/prv/prv_format.ts";
import { openPrv } from "../../src/prv/prv_reader.ts";
import { bytesSource } from "../../src/prv/prv_source.ts";
import { encryptBytes, randomBytes, sha256Hex, streamOf } from "./_prv.ts";

const SIZES = [0, 1, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 1, 5 * CHUNK_SIZE + 123];

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

for (const size of SIZES) {
  Deno.test(`a ${size}-byte plaintext round-trips, with its length, hashes and chunk count`, async () => {
    const plain = randomBytes(size);
    const { prv, enc } = await encryptBytes(plain);
    const layout = layoutForPlaintext(size);
    assert.equal(prv.byteLength, layout.prvSize);
    assert.equal(enc.prvSize, layout.prvSize);
    assert.equal(enc.plaintextSize, size);
    assert.equal(enc.plaintextSha256, await sha256Hex(plain));
    assert.equal(enc.prvSha256, await sha256Hex(prv));
    assert.match(enc.fileUid, /^[0-9a-f]{32}$/);
    const reader = await openPrv(bytesSource(prv), enc.cek);
    assert.equal(reader.plaintextLength, size);
    assert.equal(reader.chunkCount, layout.chunkCount);
    assert.deepEqual(await collect(reader.stream()), plain);
    // Chunk by chunk, too.
    const parts: Uint8Array[] = [];
    for (let i = 0; i < reader.chunkCount; i++) parts.push(await reader.decryptChunk(i));
    assert.deepEqual(await collect(new Blob(parts as BlobPart[]).stream()), plain);
  });
}

Deno.test("two encryptions of the same plaintext share no key, salt, prefix or bytes", async () => {
  const plain = randomBytes(1000);
  const a = await encryptBytes(plain);
  const b = await encryptBytes(plain);
  assert.notDeepEqual(a.enc.cek, b.enc.cek);
  assert.notEqual(a.enc.fileUid, b.enc.fileUid);
  assert.notDeepEqual(a.prv.subarray(16, 88), b.prv.subarray(16, 88));
  assert.notDeepEqual(a.prv.subarray(88), b.prv.subarray(88));
  assert.equal(a.enc.plaintextSha256, b.enc.plaintextSha256);
});

Deno.test("encryptPrv() rejects a source shorter or longer than its declared size", async () => {
  const plain = randomBytes(3 * CHUNK_SIZE);
  const sink = () => Promise.resolve();
  await assert.rejects(
    encryptPrv(streamOf(plain), plain.byteLength + 1, sink),
    (e) =>
      e instanceof PrvSourceError &&
      /ended after 196608 of 196609 bytes \(the file changed after it was checked\)/.test(
        e.message,
      ),
  );
  await assert.rejects(
    encryptPrv(streamOf(plain), plain.byteLength - 1, sink),
    (e) => e instanceof PrvSourceError && /has more than the 196607 bytes expected/.test(e.message),
  );
});

Deno.test("encryptPrv() cancels a stream source when the sink fails", async () => {
  let cancelled: unknown;
  let at = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(new Uint8Array(CHUNK_SIZE));
      at += CHUNK_SIZE;
    },
    cancel(reason) {
      cancelled = reason;
    },
  }, { highWaterMark: 0 });
  const boom = new Error("disk full");
  let writes = 0;
  await assert.rejects(
    encryptPrv(
      source,
      100 * CHUNK_SIZE,
      () => ++writes === 3 ? Promise.reject(boom) : Promise.resolve(),
    ),
    boom,
  );
  assert.equal(cancelled, boom);
  assert.ok(at < 100 * CHUNK_SIZE, "stopped reading");
});
