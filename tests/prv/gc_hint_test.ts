import assert from "node:assert/strict";
import { encryptPrv } from "../../src/prv/prv_encrypt.ts";
import { GC_HINT_CHUNKS, PRV_GC_HINT } from "../../src/prv/gc_hint.ts";
import { daemonFlags } from "../_helpers/permissions.ts";
import { CHUNK_SIZE } from "../../src/prv/prv_format.ts";
import { openPrv } from "../../src/prv/prv_reader.ts";
import { bytesSource } from "../../src/prv/prv_source.ts";
import { encryptBytes, randomBytes, streamOf } from "./_prv.ts";

type Holder = { gc?: unknown };

/** Runs `fn` with `globalThis.gc` replaced by a recorder; restores it after. */
async function withFakeGc(fn: (calls: unknown[]) => Promise<void>): Promise<void> {
  const holder = globalThis as Holder;
  const saved = holder.gc;
  const calls: unknown[] = [];
  holder.gc = (options: unknown) => calls.push(options);
  try {
    await fn(calls);
  } finally {
    if (saved === undefined) delete holder.gc;
    else holder.gc = saved;
  }
}

Deno.test("the daemon runs with gc exposed, however it is started (scripts/permissions.sh)", async () => {
  const flags = await daemonFlags("/d", "/f");
  assert.equal(flags.at(-1), "--v8-flags=--expose-gc");
});

Deno.test("stream() asks for a minor GC every GC_HINT_CHUNKS chunks when gc is exposed", async () => {
  const chunks = 2 * GC_HINT_CHUNKS + 5;
  const plain = randomBytes(chunks * CHUNK_SIZE);
  const { prv, enc } = await encryptBytes(plain);
  const reader = await openPrv(bytesSource(prv), enc.cek);
  PRV_GC_HINT.reset();
  await withFakeGc(async (calls) => {
    let n = 0;
    for await (const part of reader.stream()) n += part.byteLength;
    assert.equal(n, plain.byteLength);
    assert.deepEqual(calls, [{ type: "minor" }, { type: "minor" }]);
  });
});

Deno.test("short streams add up: 16-chunk views ask for a minor GC every GC_HINT_CHUNKS chunks in all", async () => {
  const plain = randomBytes(16 * CHUNK_SIZE);
  const { prv, enc } = await encryptBytes(plain);
  const views = GC_HINT_CHUNKS / 16 * 2 + 1; // two hints' worth, and one view more
  PRV_GC_HINT.reset();
  await withFakeGc(async (calls) => {
    for (let v = 0; v < views; v++) {
      const reader = await openPrv(bytesSource(prv), enc.cek);
      let n = 0;
      for await (const part of reader.stream()) n += part.byteLength;
      assert.equal(n, plain.byteLength);
    }
    assert.deepEqual(calls, [{ type: "minor" }, { type: "minor" }]);
  });
});

Deno.test("encryptPrv() asks for a minor GC every GC_HINT_CHUNKS sealed chunks", async () => {
  const plain = randomBytes((2 * GC_HINT_CHUNKS + 5) * CHUNK_SIZE);
  PRV_GC_HINT.reset();
  await withFakeGc(async (calls) => {
    await encryptPrv(streamOf(plain, CHUNK_SIZE), plain.byteLength, () => Promise.resolve());
    assert.deepEqual(calls, [{ type: "minor" }, { type: "minor" }]);
  });
});

Deno.test("small encryptions and views add up on the one hint", async () => {
  const plain = randomBytes(16 * CHUNK_SIZE);
  const { prv, enc } = await encryptBytes(plain);
  PRV_GC_HINT.reset();
  await withFakeGc(async (calls) => {
    for (let i = 0; i < GC_HINT_CHUNKS / 16; i++) {
      await encryptPrv(streamOf(plain, CHUNK_SIZE), plain.byteLength, () => Promise.resolve());
    }
    assert.deepEqual(calls, [{ type: "minor" }]);
    const reader = await openPrv(bytesSource(prv), enc.cek);
    for (let v = 0; v < GC_HINT_CHUNKS / 16; v++) {
      for await (const _ of reader.stream()) { /* read to the end */ }
    }
    assert.deepEqual(calls, [{ type: "minor" }, { type: "minor" }]);
  });
});
