/** Tests of content sniffing and the streaming body of decrypted plaintext. */
import assert from "node:assert/strict";
import {
  detectWithFileType,
  FALLBACK_MIME,
  noProtectedFiles,
  SNIFF_BYTES,
  sniffStream,
} from "../../src/viewer/stream.ts";
import { chunked, pngBytes } from "./_fixtures.ts";

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("sniffStream() detects PNG from magic bytes and returns every byte", async () => {
  const bytes = pngBytes(50_000);
  const { stream, state } = chunked(bytes, 1000);
  let ended: number | undefined;
  const sniffed = await sniffStream(stream, (n) => ended = n);
  assert.equal(sniffed.mime, "image/png");
  assert.ok(state.pulled >= SNIFF_BYTES && state.pulled < 10_000, "only the head was read");
  assert.deepEqual(await readAll(sniffed.body), bytes);
  assert.equal(ended, 50_000);
});

Deno.test("sniffStream() falls back to application/octet-stream for unknown bytes", async () => {
  const text = new TextEncoder().encode("just some text");
  const sniffed = await sniffStream(chunked(text, 4).stream);
  assert.equal(sniffed.mime, FALLBACK_MIME);
  assert.deepEqual(await readAll(sniffed.body), text);
});

Deno.test("sniffStream() handles an empty file", async () => {
  let ended: number | undefined;
  const sniffed = await sniffStream(chunked(new Uint8Array(0), 1).stream, (n) => ended = n);
  assert.equal(sniffed.mime, FALLBACK_MIME);
  assert.equal((await readAll(sniffed.body)).length, 0);
  assert.equal(ended, 0);
});

Deno.test("sniffStream() rejects when the head cannot be read", async () => {
  const failing = new ReadableStream<Uint8Array>({
    pull: () => Promise.reject(new Error("bad tag")),
  });
  await assert.rejects(() => sniffStream(failing), /bad tag/);
});

Deno.test("sniffStream() body cancellation reaches the plaintext source", async () => {
  const { stream, state } = chunked(pngBytes(100_000), 1000);
  const sniffed = await sniffStream(stream, () => {}, () => Promise.resolve("x/y"));
  assert.equal(sniffed.mime, "x/y");
  const reader = sniffed.body.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(state.cancelled, true);
});

Deno.test("detectWithFileType() loads file-type lazily and detects PNG", async () => {
  assert.equal(await detectWithFileType(pngBytes(64)), "image/png");
  assert.equal(await detectWithFileType(new Uint8Array([1, 2, 3])), undefined);
});

Deno.test("noProtectedFiles() finds nothing", async () => {
  assert.equal(await noProtectedFiles(10), undefined);
});
