import assert from "node:assert/strict";
import { collectYoungGarbage } from "../../src/protected_files/gc_hint.ts";
import { CHUNK_SIZE } from "../../src/protected_files/prv_format.ts";
import { GC_HINT_CHUNKS, openPrv } from "../../src/protected_files/prv_reader.ts";
import { bytesSource } from "../../src/protected_files/prv_source.ts";
import { encryptBytes, randomBytes } from "./_prv.ts";

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

Deno.test("collectYoungGarbage() does nothing when gc is not exposed", () => {
  const holder = globalThis as Holder;
  if (holder.gc !== undefined) return; // run with --expose-gc: nothing to check here
  assert.equal(collectYoungGarbage(), false);
});

Deno.test("stream() asks for a minor GC every GC_HINT_CHUNKS chunks when gc is exposed", async () => {
  const chunks = 2 * GC_HINT_CHUNKS + 5;
  const plain = randomBytes(chunks * CHUNK_SIZE);
  const { prv, enc } = await encryptBytes(plain);
  const reader = await openPrv(bytesSource(prv), enc.cek);
  await withFakeGc(async (calls) => {
    let n = 0;
    for await (const part of reader.stream()) n += part.byteLength;
    assert.equal(n, plain.byteLength);
    assert.deepEqual(calls, [{ type: "minor" }, { type: "minor" }]);
  });
});
