import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  sha256PairDeferred,
  sha256PairFor,
  sha256PairHere,
  startSha256Worker,
  WORKER_MIN_BYTES,
} from "../../src/prv/sha256_worker.ts";
import { randomBytes } from "./_prv.ts";

const hex = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};

Deno.test("the worker's two digests equal SHA-256 of what each was given, in order", async () => {
  assert.equal(await startSha256Worker(), true);
  const a = [randomBytes(100_000), randomBytes(70_000)];
  const b = [randomBytes(5), randomBytes(1 << 20)];
  const expected = [hex(...a), hex(...b)];
  const pair = await sha256PairFor(1 << 30);
  pair.update(0, a[0]);
  pair.update(1, b[0]);
  pair.update(0, a[1].slice(), true);
  pair.update(1, b[1].subarray(0, 1000)); // a view: copied
  pair.update(1, b[1].slice(1000), true);
  assert.deepEqual(await pair.digest(), expected);
  assert.deepEqual(await sha256PairHere().digest(), [hex(), hex()], "nothing hashed: empty input");
});

Deno.test("given whole buffers move to the worker; others are copied and stay the caller's", async () => {
  await startSha256Worker();
  const pair = await sha256PairFor(1 << 30);
  const given = randomBytes(65536);
  const kept = randomBytes(65536);
  const copyOfKept = kept.slice();
  const view = new Uint8Array(kept.buffer, 10, 100);
  pair.update(0, given, true);
  pair.update(1, kept);
  pair.update(1, view, true); // a view of part of a buffer is never moved
  assert.equal(given.byteLength, 0, "moved, not copied");
  assert.deepEqual(kept, copyOfKept);
  assert.equal(view.byteLength, 100);
  await pair.digest();
});

Deno.test("inputs below WORKER_MIN_BYTES are hashed on the calling thread: nothing moves", async () => {
  const pair = await sha256PairFor(WORKER_MIN_BYTES - 1);
  assert.equal(pair.here, true);
  const onWorker = await sha256PairFor(WORKER_MIN_BYTES);
  assert.equal(onWorker.here, false);
  onWorker.abort();
  const bytes = randomBytes(1000);
  pair.update(0, bytes, true);
  assert.equal(bytes.byteLength, 1000);
  assert.deepEqual(await pair.digest(), [hex(bytes), hex()]);
});

Deno.test("drained() waits until the worker has caught up; pairs run side by side", async () => {
  await startSha256Worker();
  const one = await sha256PairFor(1 << 30);
  const two = await sha256PairFor(1 << 30);
  const parts = Array.from({ length: 8 }, () => randomBytes(1 << 20));
  for (const p of parts) {
    one.update(0, p);
    two.update(1, p);
  }
  await one.drained(0);
  await two.drained(1 << 20);
  const dropped = await sha256PairFor(1 << 30);
  dropped.update(0, randomBytes(1000));
  dropped.abort();
  assert.deepEqual(await one.digest(), [hex(...parts), hex()]);
  assert.deepEqual(await two.digest(), [hex(), hex(...parts)]);
});

Deno.test("the deferred pair hashes only in digest(): kept bytes, copies of the rest", async () => {
  const plain = randomBytes(70_000);
  const parts = [randomBytes(88), randomBytes(1 << 20)];
  const expected = [hex(plain), hex(...parts)];
  const pair = sha256PairDeferred();
  pair.update(0, plain, true); // one buffer: hashed on WebCrypto's pool
  const notGiven = parts[0].slice();
  pair.update(1, notGiven); // copied: changing it afterwards changes nothing
  notGiven.fill(0);
  pair.update(1, parts[1], true);
  assert.deepEqual(await pair.digest(), expected);
  const two = sha256PairDeferred();
  two.update(0, parts[0], true);
  two.update(0, parts[1], true); // two buffers: hashed here
  assert.deepEqual(await two.digest(), [hex(...parts), hex()]);
});

Deno.test("buffers the worker is done with come back for reuse, by exact size", async () => {
  await startSha256Worker();
  const pair = await sha256PairFor(1 << 30);
  const given = randomBytes(1 << 20);
  const copy = given.slice();
  const small = randomBytes(1000);
  pair.update(0, given, true);
  pair.update(1, small); // copied: the copy comes back too
  await pair.drained(0);
  assert.equal(pair.reuse(999), undefined, "none of that size");
  assert.deepEqual(pair.reuse(1 << 20), copy, "the buffer given, moved back");
  assert.equal(pair.reuse(1 << 20), undefined, "each one once");
  assert.deepEqual(pair.reuse(1000), small);
  assert.deepEqual(await pair.digest(), [hex(copy), hex(small)]);
});
