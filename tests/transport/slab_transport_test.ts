/**
 * slabReadable against a fake connection: every chunk is a view of a slab, reads fill a slab from
 * its start without writing any byte twice, a new slab starts when a read would not fit, the
 * bytes come through whole and in order, and the end of the connection ends the stream.
 */
import assert from "node:assert/strict";
import { type ByteSource, READ_BYTES, slabReadable } from "../../src/transport/slab_transport.ts";

/** A connection handing out `total` bytes (i & 0xff) in reads of at most `most` bytes. */
function source(total: number, most: number): ByteSource & { reads: number[] } {
  let sent = 0;
  const reads: number[] = [];
  return {
    reads,
    read(p: Uint8Array) {
      reads.push(p.length);
      if (sent >= total) return Promise.resolve(null);
      const n = Math.min(p.length, most, total - sent);
      for (let i = 0; i < n; i++) p[i] = (sent + i) & 0xff;
      sent += n;
      return Promise.resolve(n);
    },
  };
}

async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

Deno.test("chunks are consecutive views of slabs, whole and in order", async () => {
  const slab = 256 * 1024;
  const total = 1_000_000;
  const chunks = await chunksOf(slabReadable(source(total, 10_000), slab));
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  assert.equal(all.length, total);
  assert.ok(all.every((b, i) => b === (i & 0xff)), "every byte, in order");

  const slabs = [...new Set(chunks.map((c) => c.buffer))];
  assert.ok(slabs.every((b) => b.byteLength === slab), "chunks are views of slabs");
  assert.ok(slabs.length > 1);
  slabs.forEach((buf, i) => {
    const views = chunks.filter((c) => c.buffer === buf);
    let next = 0;
    for (const v of views) {
      assert.equal(v.byteOffset, next, "a slab fills from its start, no byte written twice");
      next += v.length;
    }
    if (i < slabs.length - 1) {
      assert.ok(slab - next < READ_BYTES, "a new slab only when one is full");
    }
  });
});

Deno.test("a read never asks for more than is left in the slab", async () => {
  const src = source(300_000, 64 * 1024);
  await chunksOf(slabReadable(src, 100_000));
  assert.ok(src.reads.every((n) => n > 0 && n <= 64 * 1024));
});

Deno.test("the end of the connection ends the stream", async () => {
  assert.deepEqual(await chunksOf(slabReadable(source(0, 1024))), []);
});
