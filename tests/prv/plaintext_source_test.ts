import assert from "node:assert/strict";
import { fillReaderOf, type OffsetReader } from "../../src/prv/plaintext_source.ts";
import { randomBytes, streamOf } from "./_prv.ts";

/** An offset reader over `bytes` that returns at most `most` bytes a call, and logs positions. */
function offsetReaderOf(bytes: Uint8Array, most: number) {
  const positions: number[] = [];
  const reader: OffsetReader = {
    readAt(buf, position) {
      positions.push(position);
      const n = Math.max(0, Math.min(buf.byteLength, most, bytes.byteLength - position));
      buf.set(bytes.subarray(position, position + n));
      return Promise.resolve(n);
    },
  };
  return { reader, positions };
}

Deno.test("an offset reader fills whole buffers through short reads, in order, then ends", async () => {
  const bytes = randomBytes(10_000);
  const { reader, positions } = offsetReaderOf(bytes, 3000);
  const fill = fillReaderOf(reader);
  const a = new Uint8Array(4000), b = new Uint8Array(7000);
  assert.equal(await fill.fill(a), 4000);
  assert.equal(await fill.fill(b), 6000, "fewer only at the end");
  assert.deepEqual([...a, ...b.subarray(0, 6000)], [...bytes]);
  assert.equal(await fill.fill(new Uint8Array(1)), 0);
  assert.deepEqual(positions.slice(0, 4), [0, 3000, 4000, 7000]);
});

Deno.test("every kind of source gives the same bytes: stream, opened file, offsets", async () => {
  const bytes = randomBytes(70_000);
  const path = await Deno.makeTempFile();
  try {
    await Deno.writeFile(path, bytes);
    using file = await Deno.open(path);
    for (const source of [streamOf(bytes, 9_999), file, offsetReaderOf(bytes, 65_536).reader]) {
      const got = new Uint8Array(bytes.byteLength + 1);
      assert.equal(await fillReaderOf(source).fill(got), bytes.byteLength);
      assert.deepEqual(got.subarray(0, bytes.byteLength), bytes);
    }
  } finally {
    await Deno.remove(path);
  }
});
