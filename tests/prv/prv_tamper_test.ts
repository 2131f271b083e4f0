import assert from "node:assert/strict";
import { PrvError, type PrvErrorReason } from "../../src/prv/prv_errors.ts";
import {
  CHUNK_SIZE,
  chunkSpan,
  HEADER_SIZE,
  layoutForPlaintext,
  TAG_SIZE,
} from "../../src/prv/prv_format.ts";
import { openPrv } from "../../src/prv/prv_reader.ts";
import { bytesSource } from "../../src/prv/prv_source.ts";
import { encryptBytes, randomBytes } from "./_prv.ts";

// Three chunks: two full ones and a final one of 100 bytes.
const PLAIN = randomBytes(2 * CHUNK_SIZE + 100);
const { prv: PRV, enc: ENC } = await encryptBytes(PLAIN);
const LAYOUT = layoutForPlaintext(PLAIN.byteLength);
const span = (i: number) => chunkSpan(LAYOUT, i);
const chunk = (i: number) => PRV.subarray(span(i).offset, span(i).offset + span(i).length);

/** Opens and reads everything; returns the PrvError reason, or fails when it decrypts. */
async function reasonFor(prv: Uint8Array, cek = ENC.cek): Promise<PrvErrorReason> {
  try {
    const reader = await openPrv(bytesSource(prv), cek);
    await new Response(reader.stream()).arrayBuffer();
  } catch (err) {
    assert.ok(err instanceof PrvError, `expected PrvError, got ${err}`);
    assert.doesNotMatch(err.message, /[0-9a-f]{64}/, "no key material in the message");
    return err.reason;
  }
  return assert.fail("tampered file decrypted");
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.byteLength;
  return out;
};

Deno.test("the untampered file decrypts (control)", async () => {
  const reader = await openPrv(bytesSource(PRV), ENC.cek);
  assert.deepEqual(new Uint8Array(await new Response(reader.stream()).arrayBuffer()), PLAIN);
});

Deno.test("truncation is detected: a dropped final chunk, cuts inside chunks and the header", async () => {
  // At a chunk boundary: chunk 1 now ends the file but was sealed as not final.
  assert.equal(await reasonFor(PRV.subarray(0, span(2).offset)), "chunk_auth_failed");
  assert.equal(await reasonFor(PRV.subarray(0, span(1).offset)), "chunk_auth_failed");
  // Inside the final chunk, leaving a possible size.
  assert.equal(await reasonFor(PRV.subarray(0, PRV.byteLength - 10)), "chunk_auth_failed");
  // Inside chunk 1 (the rest dropped).
  assert.equal(await reasonFor(PRV.subarray(0, span(1).offset + 1000)), "chunk_auth_failed");
  // Leaving less than a tag of a chunk.
  assert.equal(await reasonFor(PRV.subarray(0, span(2).offset + TAG_SIZE - 1)), "bad_size");
  assert.equal(await reasonFor(PRV.subarray(0, HEADER_SIZE)), "bad_size");
  assert.equal(await reasonFor(PRV.subarray(0, 50)), "bad_header");
  assert.equal(await reasonFor(PRV.subarray(0, 5)), "bad_magic");
});

Deno.test("reordered, duplicated or inserted chunks are detected", async () => {
  const swapped = concat(PRV.subarray(0, HEADER_SIZE), chunk(1), chunk(0), chunk(2));
  assert.equal(await reasonFor(swapped), "chunk_auth_failed");
  const duplicated = concat(PRV.subarray(0, HEADER_SIZE), chunk(0), chunk(0), chunk(2));
  assert.equal(await reasonFor(duplicated), "chunk_auth_failed");
  const inserted = concat(PRV.subarray(0, HEADER_SIZE), chunk(0), chunk(0), chunk(1), chunk(2));
  assert.equal(await reasonFor(inserted), "chunk_auth_failed");
  const dropped = concat(PRV.subarray(0, HEADER_SIZE), chunk(0), chunk(2));
  assert.equal(await reasonFor(dropped), "chunk_auth_failed");
});

Deno.test("a flipped bit in any header byte is detected at open", async () => {
  const seen = new Set<string>();
  for (let pos = 0; pos < HEADER_SIZE; pos++) {
    const bad = PRV.slice();
    bad[pos] ^= 1 << (pos % 8);
    await assert.rejects(openPrv(bytesSource(bad), ENC.cek), (e) => {
      assert.ok(e instanceof PrvError, `byte ${pos}: ${e}`);
      seen.add(e.reason);
      return true;
    });
  }
  assert.deepEqual(
    [...seen].sort(),
    ["bad_header", "bad_magic", "header_auth_failed", "unsupported_version"],
  );
});

Deno.test("a flipped bit in any chunk's ciphertext or tag is detected", async () => {
  for (let i = 0; i < LAYOUT.chunkCount; i++) {
    const { offset, length } = span(i);
    for (const at of [0, 1, length >> 1, length - TAG_SIZE - 1, length - TAG_SIZE, length - 1]) {
      const bad = PRV.slice();
      bad[offset + at] ^= 0x80;
      assert.equal(await reasonFor(bad), "chunk_auth_failed", `chunk ${i} byte ${at}`);
    }
  }
});

Deno.test("a damaged chunk spoils only the ranges that touch it", async () => {
  const bad = PRV.slice();
  bad[span(1).offset + 7] ^= 1;
  const reader = await openPrv(bytesSource(bad), ENC.cek);
  assert.deepEqual(await reader.read(0, 10), PLAIN.subarray(0, 10));
  await assert.rejects(
    reader.read(CHUNK_SIZE - 1, CHUNK_SIZE + 1),
    (e) => e instanceof PrvError && /chunk 1 of 3 does not authenticate/.test(e.message),
  );
});

Deno.test("a wrong key is refused at open as header_auth_failed", async () => {
  assert.equal(await reasonFor(PRV, randomBytes(32)), "header_auth_failed");
  const oneBitOff = ENC.cek.slice();
  oneBitOff[31] ^= 1;
  assert.equal(await reasonFor(PRV, oneBitOff), "header_auth_failed");
  await assert.rejects(openPrv(bytesSource(PRV), randomBytes(16)), RangeError);
});

Deno.test("another version or another file type is refused by name", async () => {
  const v2 = PRV.slice();
  v2[8] = 2;
  await assert.rejects(
    openPrv(bytesSource(v2), ENC.cek),
    (e) =>
      e instanceof PrvError && e.reason === "unsupported_version" &&
      e.message === "Cannot decrypt protected file: .prv version 2 is not supported " +
          "(this build reads version 1)",
  );
  const png = concat(
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    PRV.subarray(8),
  );
  assert.equal(await reasonFor(png), "bad_magic");
});

Deno.test("a damaged chunk read ahead of the consumer is no unhandled rejection", async () => {
  // Chunk 1 fails while the consumer still holds chunk 0: the failure must wait for the next
  // pull instead of escaping as an unhandled rejection (which would end the daemon).
  const bad = PRV.slice();
  bad[span(1).offset + 3] ^= 1;
  for (let round = 0; round < 20; round++) {
    const reader = await openPrv(bytesSource(bad), ENC.cek);
    const parts = reader.stream().getReader();
    assert.deepEqual((await parts.read()).value, PLAIN.subarray(0, CHUNK_SIZE));
    await new Promise((r) => setTimeout(r, 5)); // let chunk 1's decryption fail meanwhile
    await assert.rejects(parts.read(), (e) => e instanceof PrvError);
  }
});
