/** The archive inside a backup: entries round-trip across chunk boundaries; a bad end is damage. */
import assert from "node:assert/strict";
import { type ArchiveEntry, ArchiveWriter, readArchive } from "../../src/backup/archive.ts";
import { BackupError, BackupFault } from "../../src/backup/errors.ts";

/** Archive bytes, re-cut into chunks of `size` as the sealed reader would yield them. */
async function archiveOf(
  build: (w: ArchiveWriter) => Promise<void>,
  size: number,
): Promise<Uint8Array[]> {
  const bytes: number[] = [];
  const w = new ArchiveWriter({ write: (b) => Promise.resolve(void bytes.push(...b)) });
  await build(w);
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    out.push(new Uint8Array(bytes.slice(at, at + size)));
  }
  return out;
}

async function* from(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

async function collect(entry: ArchiveEntry): Promise<string> {
  let text = "";
  for await (const part of entry.content) text += new TextDecoder().decode(part, { stream: true });
  return text;
}

function source(text: string) {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return {
    read(into: Uint8Array) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(into.length, bytes.length - at);
      into.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

Deno.test("entries round-trip whatever the chunk size, also when a reader skips one", async () => {
  const big = "b".repeat(70_000);
  for (const size of [1, 7, 4096, 1 << 20]) {
    const chunks = await archiveOf(async (w) => {
      await w.addBytes("manifest.json", new TextEncoder().encode("{}"));
      await w.addStream("accounts/1/gateway.db", big.length, source(big));
      await w.addBytes("empty", new Uint8Array());
      await w.addBytes("last", new TextEncoder().encode("end"));
      await w.finish();
    }, size);
    const seen: [string, string][] = [];
    for await (const e of readArchive(from(chunks), "t.bak")) {
      seen.push([e.name, e.name === "accounts/1/gateway.db" ? "(skipped)" : await collect(e)]);
    }
    assert.deepEqual(seen, [
      ["manifest.json", "{}"],
      ["accounts/1/gateway.db", "(skipped)"],
      ["empty", ""],
      ["last", "end"],
    ], `chunks of ${size}`);
  }
});

Deno.test("a file that ends early while copied fails the export", async () => {
  const w = new ArchiveWriter({ write: () => Promise.resolve() });
  await assert.rejects(() => w.addStream("x", 10, source("short")), /"x" ended 5 bytes early/);
});

Deno.test("content without the end mark, or data after it, is damage", async () => {
  const noEnd = await archiveOf((w) => w.addBytes("a", new Uint8Array([1])), 4);
  const afterEnd = [...await archiveOf((w) => w.finish(), 4), new Uint8Array([9])];
  for (const chunks of [noEnd, afterEnd]) {
    const err = await (async () => {
      for await (const e of readArchive(from(chunks), "t.bak")) await collect(e);
    })().then(() => undefined, (e) => e);
    assert.ok(err instanceof BackupError);
    assert.equal(err.fault, BackupFault.DAMAGED);
  }
});
