import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  DEFAULT_BATCH_CHUNKS,
  encryptPrv,
  encryptToPrv,
  prvPathFor,
} from "../../src/prv/prv_encrypt.ts";
import { PrvSourceError } from "../../src/prv/prv_errors.ts";
import { CHUNK_SIZE, HEADER_SIZE, TAG_SIZE } from "../../src/prv/prv_format.ts";
import { openPrvFile } from "../../src/prv/prv_reader.ts";
import { WORKER_MIN_BYTES } from "../../src/prv/sha256_worker.ts";
import { poll } from "../_helpers/poll.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { openAttachableFile } from "../../src/core/file_access.ts";
import { generatedSlice, generatedStream, randomBytes, sha256Hex, streamOf } from "./_prv.ts";

const ROOT = new URL("../../", import.meta.url);

async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const part of (await Deno.open(path)).readable) h.update(part);
  return h.digest("hex");
}

Deno.test("encryptToPrv() writes <path>.prv (0600) from an opened file, with both hashes", async () => {
  await withTempDir(async (dir) => {
    const plain = randomBytes(3 * CHUNK_SIZE + 5);
    const src = `${dir}/report.csv`;
    await Deno.writeFile(src, plain);
    using file = await Deno.open(src);
    const enc = await encryptToPrv(file, plain.byteLength, prvPathFor(src));
    assert.equal(enc.path, `${src}.prv`);
    assert.equal((await Deno.stat(enc.path)).mode! & 0o777, 0o600);
    assert.equal(enc.plaintextSha256, await sha256Hex(plain));
    assert.equal(enc.prvSha256, await sha256File(enc.path));
    assert.equal((await Deno.stat(enc.path)).size, enc.prvSize);
    assert.deepEqual(await Deno.readFile(src), plain, "the plaintext is only read");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "report.csv",
      "report.csv.prv",
    ]);
    await using reader = await openPrvFile(enc.path, enc.cek);
    assert.deepEqual(await reader.read(0, plain.byteLength), plain);
  });
});

Deno.test("a failure mid-write leaves no final file and no temporary file", async () => {
  await withTempDir(async (dir) => {
    const dest = `${dir}/data.bin.prv`;
    let sent = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 20 * CHUNK_SIZE) return c.error(new Error("read error: device gone"));
        c.enqueue(new Uint8Array(CHUNK_SIZE));
        sent += CHUNK_SIZE;
      },
    }, { highWaterMark: 0 });
    await assert.rejects(encryptToPrv(failing, 100 * CHUNK_SIZE, dest), /device gone/);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
    // A source that turns out shorter than checked: the same, and the error says so.
    await assert.rejects(
      encryptToPrv(streamOf(randomBytes(1000)), 2000, dest),
      (e) => e instanceof PrvSourceError && /ended after 1000 of 2000 bytes/.test(e.message),
    );
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  });
});

Deno.test("a failed encryption leaves an existing .prv as it was; a successful one replaces it", async () => {
  await withTempDir(async (dir) => {
    const dest = `${dir}/x.prv`;
    await Deno.writeTextFile(dest, "previous");
    await assert.rejects(encryptToPrv(streamOf(randomBytes(10)), 11, dest), PrvSourceError);
    assert.equal(await Deno.readTextFile(dest), "previous");
    const enc = await encryptToPrv(streamOf(randomBytes(10)), 10, dest);
    assert.equal((await Deno.stat(dest)).size, enc.prvSize);
    assert.equal([...Deno.readDirSync(dir)].length, 1);
  });
});

Deno.test("encryptToPrv() into a missing directory fails and releases the stream source", async () => {
  let cancelled = false;
  const source = new ReadableStream<Uint8Array>({
    cancel() {
      cancelled = true;
    },
  });
  await assert.rejects(encryptToPrv(source, 1, "/nonexistent-dir-prv/x.prv"), Deno.errors.NotFound);
  assert.ok(cancelled);
});

Deno.test("a process killed mid-write leaves no file under the final name", async () => {
  await withTempDir(async (dir) => {
    const script = `${dir}/writer.ts`;
    const module = new URL("src/prv/prv_encrypt.ts", ROOT).href;
    // Sends 4 MiB of a declared 10 MiB, then hangs (the process stays alive until killed).
    await Deno.writeTextFile(
      script,
      `import { encryptToPrv } from ${JSON.stringify(module)};
setInterval(() => {}, 60_000);
let sent = 0;
const source = new ReadableStream({
  pull(c) {
    if (sent >= 4 * 1048576) return new Promise(() => {});
    c.enqueue(new Uint8Array(65536));
    sent += 65536;
  },
}, { highWaterMark: 0 });
await encryptToPrv(source, 10 * 1048576, Deno.args[0]);
`,
    );
    const dest = `${dir}/big.bin.prv`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-config", `--allow-read=${dir}`, `--allow-write=${dir}`, script, dest],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const tempSize = async () => {
      const tmp = [...Deno.readDirSync(dir)].find((e) => e.name.startsWith(".big.bin.prv.tmp-"));
      return tmp ? (await Deno.stat(`${dir}/${tmp.name}`)).size : 0;
    };
    // Wait until the writer is well into the body (more than 20 chunks written), then kill it.
    const size = await poll(tempSize, (s) => s > HEADER_SIZE + 20 * (CHUNK_SIZE + TAG_SIZE));
    child.kill("SIGKILL");
    const status = await child.status;
    await child.stderr.cancel();
    assert.ok(size > HEADER_SIZE + 20 * (CHUNK_SIZE + TAG_SIZE), `temp file reached ${size} bytes`);
    assert.equal(status.signal, "SIGKILL");
    await assert.rejects(Deno.stat(dest), Deno.errors.NotFound);
    // What is left is only the hidden temporary file.
    const left = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n !== "writer.ts");
    assert.equal(left.length, 1);
    assert.match(left[0], /^\.big\.bin\.prv\.tmp-[0-9a-f]{12}$/);
  });
});

Deno.test("encryptPrv() streams 50 MB reading at most two batches ahead of its output", async () => {
  const size = 50 * 1024 * 1024;
  const block = randomBytes(CHUNK_SIZE);
  const { stream, pulled } = generatedStream(size, block);
  let emittedPlain = 0;
  let maxLead = 0;
  let calls = 0;
  const batchBytes = DEFAULT_BATCH_CHUNKS * CHUNK_SIZE;
  const enc = await encryptPrv(stream, size, async (bytes) => {
    const body = calls++ === 0 ? bytes.byteLength - HEADER_SIZE : bytes.byteLength;
    emittedPlain += body - (body / (CHUNK_SIZE + TAG_SIZE)) * TAG_SIZE;
    maxLead = Math.max(maxLead, pulled() - emittedPlain);
    if (calls % 8 === 0) await new Promise((r) => setTimeout(r, 0)); // a slow sink now and then
  });
  assert.equal(calls, size / batchBytes, "one write per batch, the header with the first");
  assert.equal(emittedPlain, size);
  // Held at most: the batch being written and the batch being sealed.
  assert.ok(maxLead <= 2 * batchBytes, `read ${maxLead} bytes ahead`);
  const h = createHash("sha256");
  for (let at = 0; at < size; at += 1 << 20) h.update(generatedSlice(block, at, 1 << 20));
  assert.equal(enc.plaintextSha256, h.digest("hex"));
});

Deno.test("a 50 MB file encrypts to disk and streams back identical, chunk by chunk", async () => {
  await withTempDir(async (dir) => {
    const size = 50 * 1024 * 1024;
    const block = randomBytes(CHUNK_SIZE);
    const { stream } = generatedStream(size, block, 65_536);
    const enc = await encryptToPrv(stream, size, `${dir}/big.bin.prv`);
    assert.equal(enc.prvSha256, await sha256File(enc.path));
    await using reader = await openPrvFile(enc.path, enc.cek);
    assert.equal(reader.plaintextLength, size);
    const h = createHash("sha256");
    let at = 0;
    let parts = 0;
    for await (const part of reader.stream()) {
      assert.ok(part.byteLength <= CHUNK_SIZE, "one chunk at a time");
      if (parts++ % 97 === 0) assert.deepEqual(part, generatedSlice(block, at, part.byteLength));
      h.update(part);
      at += part.byteLength;
    }
    assert.equal(at, size);
    assert.equal(h.digest("hex"), enc.plaintextSha256);
  });
});

/** SHA-256 (hex) of the concatenation of `parts`: the reference the writer's digests must equal. */
const referenceSha256 = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};

Deno.test("every hashing path gives SHA-256 of the plaintext and of the written .prv", async () => {
  await withTempDir(async (dir) => {
    // One batch (its output hashed while the file is flushed), several batches hashed chunk by
    // chunk here, and a size from WORKER_MIN_BYTES (hashed on the worker); edges of a chunk.
    const cases: [number, number | undefined][] = [
      [0, undefined],
      [1, undefined],
      [CHUNK_SIZE, undefined],
      [DEFAULT_BATCH_CHUNKS * CHUNK_SIZE, undefined],
      [DEFAULT_BATCH_CHUNKS * CHUNK_SIZE + 1, undefined],
      [5 * CHUNK_SIZE + 7, 2],
      [WORKER_MIN_BYTES + 3, undefined],
    ];
    for (const [size, batchChunks] of cases) {
      const plain = randomBytes(size);
      const src = `${dir}/plain-${size}`;
      await Deno.writeFile(src, plain);
      using file = await Deno.open(src);
      const options = batchChunks === undefined ? {} : { batchChunks };
      const enc = await encryptToPrv(file, size, prvPathFor(src), options);
      const written = await Deno.readFile(enc.path);
      const what = `${size} bytes, batches of ${batchChunks ?? DEFAULT_BATCH_CHUNKS}`;
      assert.equal(enc.plaintextSha256, referenceSha256(plain), what);
      assert.equal(enc.prvSha256, referenceSha256(written), what);
      assert.equal(written.byteLength, enc.prvSize, what);
      // The same through a sink that may keep the buffers (hashed before they are handed on).
      const kept: Uint8Array[] = [];
      const inMemory = await encryptPrv(streamOf(plain, 50_000), size, (b) => {
        kept.push(b);
        return Promise.resolve();
      }, options);
      assert.equal(inMemory.plaintextSha256, enc.plaintextSha256, what);
      assert.equal(inMemory.prvSha256, referenceSha256(...kept), what);
      await using reader = await openPrvFile(enc.path, enc.cek);
      assert.deepEqual(await reader.read(0, size), plain, what);
      await Deno.remove(src);
      await Deno.remove(enc.path);
    }
  });
});

Deno.test("a file that grew after its check is refused, one batch or several; nothing is left", async () => {
  await withTempDir(async (dir) => {
    for (const size of [1000, 3 * DEFAULT_BATCH_CHUNKS * CHUNK_SIZE]) {
      const src = `${dir}/grown.bin`;
      await Deno.writeFile(src, randomBytes(size + 1));
      using file = await Deno.open(src);
      await assert.rejects(
        encryptToPrv(file, size, `${src}.prv`),
        (e) => e instanceof PrvSourceError && e.message.includes(`more than the ${size} bytes`),
      );
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["grown.bin"]);
    }
  });
});

Deno.test("encryptToPrv() reads a checked file (openAttachableFile) at offsets, same hashes", async () => {
  await withTempDir(async (dir) => {
    for (const size of [100, 3 * DEFAULT_BATCH_CHUNKS * CHUNK_SIZE + 5]) {
      const plain = randomBytes(size);
      const src = `${dir}/files/doc-${size}.bin`;
      await Deno.mkdir(`${dir}/files`, { recursive: true });
      await Deno.writeFile(src, plain);
      const use = { method: "secure_send_file", verb: "protected" };
      await using file = await openAttachableFile(
        src,
        { filesDir: `${dir}/files`, dataDir: dir },
        use,
      );
      const enc = await encryptToPrv(file, file.size, prvPathFor(src));
      assert.equal(enc.plaintextSha256, referenceSha256(plain));
      assert.equal(enc.prvSha256, await sha256File(enc.path));
      await using reader = await openPrvFile(enc.path, enc.cek);
      assert.deepEqual(await reader.read(0, size), plain);
    }
  });
});
