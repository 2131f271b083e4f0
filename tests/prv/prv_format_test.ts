import assert from "node:assert/strict";
import { PrvError } from "../../src/prv/prv_errors.ts";
import {
  CHUNK_SIZE,
  chunkIndexOf,
  chunkNonce,
  chunksForRange,
  chunkSpan,
  encodeHeader,
  HEADER_SIZE,
  layoutForPlaintext,
  layoutForPrvSize,
  parseHeader,
  PRV_MAGIC,
  TAG_SIZE,
} from "../../src/prv/prv_format.ts";

const fields = {
  fileUid: new Uint8Array(16).fill(1),
  salt: new Uint8Array(16).fill(2),
  noncePrefix: new Uint8Array(7).fill(3),
};

const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PrvError, `expected PrvError, got ${err}`);
    return err.reason;
  }
  assert.fail("no error");
};

Deno.test("encodeHeader() writes magic, version 1 and the fields at their documented offsets", () => {
  const h = encodeHeader(fields);
  assert.equal(h.byteLength, HEADER_SIZE);
  assert.deepEqual(h.subarray(0, 8), PRV_MAGIC);
  assert.deepEqual([...h.subarray(8, 16)], [1, 1, 16, 0, 0, 88, 0, 0]);
  assert.deepEqual(h.subarray(16, 32), fields.fileUid);
  assert.deepEqual(h.subarray(32, 48), fields.salt);
  assert.deepEqual(h.subarray(48, 55), fields.noncePrefix);
  assert.equal(h[55], 0);
  const parsed = parseHeader(h);
  assert.deepEqual(parsed.fileUid, fields.fileUid);
  assert.deepEqual(parsed.salt, fields.salt);
  assert.deepEqual(parsed.noncePrefix, fields.noncePrefix);
  assert.equal(parsed.mac.byteLength, 32);
});

Deno.test("parseHeader() rejects a wrong magic, an unknown version and changed v1 constants", () => {
  const h = encodeHeader(fields);
  assert.equal(reasonOf(() => parseHeader(new Uint8Array(0))), "bad_magic");
  assert.equal(
    reasonOf(() => parseHeader(new TextEncoder().encode("%PDF-1.7 hello"))),
    "bad_magic",
  );
  const v2 = h.slice();
  v2[8] = 2;
  assert.equal(reasonOf(() => parseHeader(v2)), "unsupported_version");
  assert.match(
    (() => {
      try {
        parseHeader(v2);
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    })(),
    /version 2 is not supported \(this build reads version 1\)/,
  );
  assert.equal(reasonOf(() => parseHeader(h.subarray(0, 8))), "unsupported_version");
  assert.equal(reasonOf(() => parseHeader(h.subarray(0, 40))), "bad_header");
  for (const offset of [9, 10, 11, 12, 13, 14, 15, 55]) {
    const bad = h.slice();
    bad[offset] ^= 0x01;
    assert.equal(reasonOf(() => parseHeader(bad)), "bad_header", `offset ${offset}`);
  }
});

Deno.test("chunkNonce() is prefix ‖ u32 big-endian index ‖ last flag", () => {
  const n = chunkNonce(fields.noncePrefix, 0x01020304, false);
  assert.deepEqual([...n], [3, 3, 3, 3, 3, 3, 3, 1, 2, 3, 4, 0]);
  assert.equal(chunkNonce(fields.noncePrefix, 0, true)[11], 1);
  assert.throws(() => chunkNonce(fields.noncePrefix, 2 ** 32, false), RangeError);
});

Deno.test("layoutForPrvSize() inverts layoutForPlaintext() around chunk boundaries", () => {
  const sizes = [
    0,
    1,
    CHUNK_SIZE - 1,
    CHUNK_SIZE,
    CHUNK_SIZE + 1,
    3 * CHUNK_SIZE,
    3 * CHUNK_SIZE + 5,
  ];
  for (const p of [...sizes, 1024 ** 3]) {
    const fwd = layoutForPlaintext(p);
    assert.deepEqual(layoutForPrvSize(fwd.prvSize), fwd, `plaintext ${p}`);
  }
  assert.equal(layoutForPlaintext(0).prvSize, HEADER_SIZE + TAG_SIZE);
  assert.equal(layoutForPlaintext(CHUNK_SIZE).chunkCount, 1);
  assert.equal(layoutForPlaintext(CHUNK_SIZE + 1).chunkCount, 2);
  // The documented example: 1 GiB.
  assert.deepEqual(layoutForPlaintext(1024 ** 3), {
    plaintextLength: 1024 ** 3,
    chunkCount: 16_384,
    prvSize: 1_074_004_056,
  });
});

Deno.test("layoutForPrvSize() answers bad_size for sizes no writer produces", () => {
  const full = CHUNK_SIZE + TAG_SIZE;
  for (
    const s of [
      0,
      HEADER_SIZE,
      HEADER_SIZE + TAG_SIZE - 1, // cut inside the only tag
      HEADER_SIZE + full + 5, // second chunk shorter than a tag
      HEADER_SIZE + full + TAG_SIZE, // empty final chunk after a full one
    ]
  ) {
    assert.equal(reasonOf(() => layoutForPrvSize(s)), "bad_size", `size ${s}`);
  }
});

Deno.test("chunkSpan() and chunksForRange() map plaintext offsets to chunks", () => {
  const layout = layoutForPlaintext(2 * CHUNK_SIZE + 10);
  assert.deepEqual(chunkSpan(layout, 2), {
    index: 2,
    last: true,
    offset: HEADER_SIZE + 2 * (CHUNK_SIZE + TAG_SIZE),
    length: 10 + TAG_SIZE,
    plainStart: 2 * CHUNK_SIZE,
    plainLength: 10,
  });
  assert.equal(chunkSpan(layout, 0).last, false);
  assert.throws(() => chunkSpan(layout, 3), RangeError);
  assert.equal(chunkIndexOf(CHUNK_SIZE - 1), 0);
  assert.equal(chunkIndexOf(CHUNK_SIZE), 1);
  assert.deepEqual(chunksForRange(layout, 0, 1), [0, 0]);
  assert.deepEqual(chunksForRange(layout, CHUNK_SIZE - 1, CHUNK_SIZE + 1), [0, 1]);
  assert.deepEqual(chunksForRange(layout, CHUNK_SIZE, 2 * CHUNK_SIZE), [1, 1]);
  assert.deepEqual(chunksForRange(layout, 2 * CHUNK_SIZE + 9, 2 * CHUNK_SIZE + 10), [2, 2]);
  assert.equal(chunksForRange(layout, 5, 5), undefined);
  assert.throws(() => chunksForRange(layout, 0, 2 * CHUNK_SIZE + 11), RangeError);
  assert.throws(() => chunksForRange(layout, 6, 5), RangeError);
});
