/**
 * `/stream` through the real daemon (issue 11 §6, viewer half), from bench/drivers/run.ts (alone:
 * `BENCH_ONLY=prv-stream deno task bench`): 1 MiB, 100 MiB and 1 GiB protected files streamed
 * over HTTP as a ratio of raw WebCrypto AES-256-GCM decryption of the same bytes (paired rounds),
 * time to first byte and a 1 MiB Range read at the end of the 1 GiB file, and the daemon's RSS
 * growth while it streams 1 GiB. The `.prv` files are written into the daemon's blob directory and
 * registered in its store as the owner's sent messages (a 1 GiB file cannot travel by mail: the
 * relay takes 30 MiB); everything after that is the daemon's own code path.
 */
import { blobDirOf } from "../../src/core/context.ts";
import { DataDirLayout } from "../../src/constants.ts";
import {
  deviceTagOf,
  deviceWrap,
  storedSecretKeysOf,
} from "../../src/protected_files/key_shares.ts";
import { encryptToPrv } from "../../src/prv/mod.ts";
import { RECENT_WRITE_MS } from "../../src/protected_files/prv_open_cache.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { spawnDaemon } from "../../tests/_helpers/daemon.ts";
import { startRelay } from "../../tests/_helpers/relay.ts";
import { rssMb } from "../../tests/_helpers/rss.ts";
import { freePort } from "../../tests/_helpers/ports.ts";
import { makeTempDir } from "../../tests/_helpers/temp.ts";
import { HttpGetClient } from "../drivers/http_get.ts";
import { median, quantile } from "./prv.ts";
import { randomAesKey } from "../baselines/raw_aes.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MiB = 1 << 20;
const CHUNK = 65_536;
const SIZES_MIB = (Deno.env.get("BENCH_PRV_STREAM_SIZES") ?? "1,100,1024").split(",").map(Number);
const roundsFor = (mib: number) => mib <= 1 ? 100 : mib <= 100 ? 5 : 3;
/** Unmeasured rounds first: a 1 MiB request is ~2 ms, too short to leave V8's first tiers. */
const warmUpsFor = (mib: number) => mib <= 1 ? 30 : 1;
const LATENCY_REPS = 25;
const BEGIN = "<!-- prv-stream:begin -->";
const END = "<!-- prv-stream:end -->";

/** A random 16 MiB window repeated into a file of `bytes` bytes. */
async function plaintextFile(path: string, bytes: number, window: Uint8Array): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  for (let at = 0; at < bytes;) {
    const n = Math.min(window.length, bytes - at);
    for (let off = 0; off < n;) off += await f.write(window.subarray(off, n));
    at += n;
  }
}

/** Raw WebCrypto: decrypt `bytes` bytes (of `sealed`, 64 KiB + tag per call) one call at a time. */
async function rawDecrypt(
  key: CryptoKey,
  sealed: Uint8Array<ArrayBuffer>[],
  bytes: number,
): Promise<number> {
  const t0 = performance.now();
  const iv = new Uint8Array(12);
  for (let done = 0, i = 0; done < bytes; done += CHUNK, i++) {
    await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, sealed[i % sealed.length]);
  }
  return performance.now() - t0;
}

/** GET /stream/:id with fetch() read to its end (bytes dropped); ms, and ms to the first bytes. */
async function fetchAll(
  url: string,
  token: string,
  range?: string,
): Promise<{ ms: number; ttfb: number; bytes: number }> {
  const t0 = performance.now();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (range) headers.range = range;
  const res = await fetch(url, { headers });
  if (res.status !== 200 && res.status !== 206) throw new Error(`${url}: HTTP ${res.status}`);
  const reader = res.body!.getReader();
  let ttfb = -1, bytes = 0;
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    if (ttfb < 0) ttfb = performance.now() - t0;
    bytes += r.value.byteLength;
  }
  return { ms: performance.now() - t0, ttfb, bytes };
}

/** The same GET with the lean client (bench/drivers/http_get.ts): one connection, one reused buffer. */
async function getAll(
  client: HttpGetClient,
  path: string,
  token: string,
  range?: string,
): Promise<{ ms: number; ttfb: number; bytes: number }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (range) headers.range = range;
  const r = await client.get(path, headers);
  if (r.status !== 200 && r.status !== 206) throw new Error(`${path}: HTTP ${r.status}`);
  return r;
}

interface Row {
  mib: number;
  rounds: number;
  rawMs: number;
  streamMs: number;
  ratio: [number, number, number];
  fetchMs: number;
  fetchRatio: number;
  /**
   * CPU ms per call (1 MiB only), measured after the rounds over as many calls in a row: the
   * daemon and this process (the lean client) per `/stream`, this process per `fetch()` of it and
   * per raw decryption.
   */
  cpu?: { daemon: number; self: number; fetch: number; raw: number };
}

/** The 1-minute load average (runnable processes; 2 cores here), from /proc/loadavg. */
async function loadAverage(): Promise<string> {
  return (await Deno.readTextFile("/proc/loadavg")).split(" ")[0];
}

/** CPU time (ms) the threads of a process have run so far (each task's schedstat, in ns). */
async function cpuMs(pid: number | "self"): Promise<number> {
  let ns = 0;
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    const stat = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/schedstat`).catch(() =>
      ""
    );
    ns += Number(stat.split(" ")[0] || 0);
  }
  return ns / 1e6;
}

/** CPU ms per call of `fn`, over `n` calls in a row: of the daemon, and of this process. */
async function cpuPerCall(
  daemonPid: number,
  n: number,
  fn: () => Promise<unknown>,
): Promise<{ daemon: number; self: number }> {
  const [d0, s0] = [await cpuMs(daemonPid), await cpuMs("self")];
  for (let i = 0; i < n; i++) await fn();
  const [d1, s1] = [await cpuMs(daemonPid), await cpuMs("self")];
  return { daemon: (d1 - d0) / n, self: (s1 - s0) / n };
}

/** The least `/stream` server (bench/baselines/stream_floor_server.ts) for `mib` MiB, as a child process. */
async function startFloorServer(mib: number): Promise<{ port: number; child: Deno.ChildProcess }> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      new URL("../baselines/stream_floor_server.ts", import.meta.url).pathname,
      String(port),
      String(mib),
    ],
    // The allocator setting the daemon runs with (scripts/start.sh).
    env: { MALLOC_MMAP_THRESHOLD_: "4194304" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("listening")) {
    const r = await lines.read();
    if (r.done) throw new Error("the least /stream server exited before listening");
    out += r.value;
  }
  lines.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { port, child };
}

/**
 * The least server measured like the daemon at 1 MiB (warm-ups, paired rounds with raw, CPU per
 * request): what HTTP and WebCrypto alone allow on this machine, with none of our request path.
 */
async function floorRow(key: CryptoKey, sealed: Uint8Array<ArrayBuffer>[]) {
  const { port, child } = await startFloorServer(1);
  try {
    using client = new HttpGetClient("127.0.0.1", port);
    for (let w = 0; w < warmUpsFor(1); w++) {
      await rawDecrypt(key, sealed, MiB);
      await client.get("/");
    }
    const times: number[] = [], ratios: number[] = [];
    for (let r = 0; r < roundsFor(1); r++) {
      let raw: number, s: number;
      if (r % 2 === 0) {
        raw = await rawDecrypt(key, sealed, MiB);
        s = (await client.get("/")).ms;
      } else {
        s = (await client.get("/")).ms;
        raw = await rawDecrypt(key, sealed, MiB);
      }
      times.push(s);
      ratios.push(raw / s);
    }
    const cpu = await cpuPerCall(child.pid, roundsFor(1), () => client.get("/"));
    return { ms: median(times), ratio: median(ratios), cpu: cpu.daemon };
  } finally {
    child.kill();
    await child.status;
  }
}

const mbps = (bytes: number, ms: number) =>
  `${Math.round(bytes / MiB / (ms / 1000)).toLocaleString("en")} MiB/s`;
const f2 = (x: number) => x.toFixed(2);

/** Runs the section and writes it into BENCHMARKS.md. */
export async function runPrvStreamSection(
  command = "npx --yes deno@2.9.5 task bench",
): Promise<void> {
  const started = performance.now();
  const loadStart = await loadAverage();
  await using relay = await startRelay();
  await using tmp = await makeTempDir("bench-prv-stream");
  const dataDir = `${tmp.path}/gw`;
  await using daemon = spawnDaemon({ relay, dataDir });
  await daemon.waitHealthy();
  const fingerprint = (await Deno.readTextFile(`${dataDir}/${DataDirLayout.DEVICE_FINGERPRINT}`))
    .trim();
  const store = Store.open(`${dataDir}/${DataDirLayout.DATABASE}`);
  // Sent files' CEKs are wrapped under the installation's owner key (docs/identity.md).
  const ownerKey = storedSecretKeysOf(store.config.get(ConfigKey.INSTALLATION_SECRET)!, "").owner;
  const blobDir = blobDirOf(dataDir);
  await Deno.mkdir(blobDir, { recursive: true });
  const window = new Uint8Array(16 * MiB);
  for (let i = 0; i < window.length; i += 65_536) {
    crypto.getRandomValues(window.subarray(i, i + 65_536));
  }

  /** Encrypts a file of `mib` MiB into the daemon's blobs and registers it: msg id and path. */
  const register = async (mib: number): Promise<{ id: number; file: string }> => {
    const plain = `${tmp.path}/plain-${mib}`;
    await plaintextFile(plain, mib * MiB, window);
    using src = await Deno.open(plain);
    const enc = await encryptToPrv(src, mib * MiB, `${blobDir}/incoming-${mib}.prv`);
    await Deno.remove(plain);
    const blob = `${enc.prvSha256.slice(0, 32)}.prv`;
    await Deno.rename(enc.path, `${blobDir}/${blob}`);
    store.protectedFiles.insertSent({
      fileUid: enc.fileUid,
      chatId: 0,
      path: `${blobDir}/${blob}`,
      prvSha256: enc.prvSha256,
      plaintextSha256: enc.plaintextSha256,
      name: `bench-${mib}.bin`,
      mime: "application/octet-stream",
      size: enc.plaintextSize,
      cek: deviceWrap(ownerKey, "cek", enc.fileUid, enc.cek),
      keyTag: deviceTagOf(ownerKey),
      allowDownload: true,
      allowForward: false,
      durationMinutes: 0,
      filePdu: "",
      createdAt: Math.floor(Date.now() / 1000),
    }, []);
    const id = store.msgs.insert({
      rfc724Mid: `bench-${mib}-${enc.fileUid}@bench`,
      chatId: 0,
      fromId: 1,
      text: "",
      timestamp: 0,
      state: 20,
      hidden: true,
      file: blob,
      fileName: `bench-${mib}.bin.prv`,
      fileBytes: enc.prvSize,
      viewtype: "File",
    });
    return { id, file: `${blobDir}/${blob}` };
  };

  const auth = await fetch(`${daemon.url}/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ device_fingerprint: fingerprint }),
  });
  const token = (await auth.json()).token as string;
  const key = await randomAesKey();
  const sealed: Uint8Array<ArrayBuffer>[] = [];
  for (let i = 0; i < 64; i++) {
    sealed.push(
      new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv: new Uint8Array(12) },
          key,
          window.subarray(i * CHUNK, (i + 1) * CHUNK),
        ),
      ),
    );
  }

  using client = new HttpGetClient("127.0.0.1", daemon.port);
  const registered = new Map<number, { id: number; file: string }>();
  for (const mib of SIZES_MIB) registered.set(mib, await register(mib));
  // A file is viewed after it arrived: the open cache skips files written in the last 50 ms.
  await new Promise((r) => setTimeout(r, 2 * RECENT_WRITE_MS));
  const bigId = registered.get(Math.max(...SIZES_MIB))!.id;

  /**
   * The daemon's RSS before and while it streams the largest file whole (sampled every 20 ms);
   * "before" is after a 1 MiB range of that file and half a second of rest.
   */
  const rssWhileStreaming = async () => {
    await getAll(client, `/stream/${bigId}`, token, "bytes=0-1048575");
    await new Promise((r) => setTimeout(r, 500));
    const rest = (await rssMb(daemon.pid)).now;
    let peak = rest;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, (await rssMb(daemon.pid)).now);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const whole = await getAll(client, `/stream/${bigId}`, token);
    sampling = false;
    await sampler;
    return { rest, peak, whole };
  };
  // First, on the fresh daemon (only a 1 MiB range served before): what streaming costs it.
  const fresh = await rssWhileStreaming();

  const rows: Row[] = [];
  let uncached: { mib: number; ms: number; rawMs: number; ratio: number } | undefined;
  for (const mib of SIZES_MIB) {
    const { id, file } = registered.get(mib)!;
    const path = `/stream/${id}`;
    const url = `${daemon.url}${path}`;
    for (let w = 0; w < warmUpsFor(mib); w++) { // warm-up: page cache, JIT (both sides)
      await rawDecrypt(key, sealed, mib * MiB);
      await getAll(client, path, token);
      await fetchAll(url, token);
    }
    const raws: number[] = [], ours: number[] = [], ratios: number[] = [];
    const viaFetch: number[] = [], fetchRatios: number[] = [];
    for (let r = 0; r < roundsFor(mib); r++) {
      let raw: number, s: number;
      if (r % 2 === 0) {
        raw = await rawDecrypt(key, sealed, mib * MiB);
        s = (await getAll(client, path, token)).ms;
      } else {
        s = (await getAll(client, path, token)).ms;
        raw = await rawDecrypt(key, sealed, mib * MiB);
      }
      raws.push(raw);
      ours.push(s);
      ratios.push(raw / s);
      // The same request through fetch(), for comparison (not in the ratio).
      const f = (await fetchAll(url, token)).ms;
      viaFetch.push(f);
      fetchRatios.push(raw / f);
    }
    rows.push({
      mib,
      rounds: ratios.length,
      rawMs: median(raws),
      streamMs: median(ours),
      ratio: [median(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75)],
      fetchMs: median(viaFetch),
      fetchRatio: median(fetchRatios),
      ...(mib > 1 ? {} : {
        cpu: {
          ...(await cpuPerCall(daemon.pid, roundsFor(mib), () => getAll(client, path, token))),
          fetch: (await cpuPerCall(daemon.pid, roundsFor(mib), () => fetchAll(url, token))).self,
          raw: (await cpuPerCall(daemon.pid, roundsFor(mib), () => rawDecrypt(key, sealed, MiB)))
            .self,
        },
      }),
    });
    console.log(`prv-stream ${mib} MiB: ratio ${f2(median(ratios))}`);
    if (mib === Math.min(...SIZES_MIB)) {
      // The open not cached (a first view, or a changed file): before each request the file's
      // mtime moves (a new identity), so the daemon checks the header MAC and the final chunk
      // and sniffs chunk 0 again.
      const rawU: number[] = [], oursU: number[] = [], ratiosU: number[] = [];
      for (let r = 0; r < roundsFor(mib); r++) {
        const past = (Date.now() - 3_600_000) / 1000 - r;
        await Deno.utime(file, past, past);
        const raw = await rawDecrypt(key, sealed, mib * MiB);
        const s = (await getAll(client, path, token)).ms;
        rawU.push(raw);
        oursU.push(s);
        ratiosU.push(raw / s);
      }
      uncached = { mib, ms: median(oursU), rawMs: median(rawU), ratio: median(ratiosU) };
    }
  }

  const floor = SIZES_MIB.includes(1) ? await floorRow(key, sealed) : undefined;

  // Latency on the largest file: first bytes of a whole-file stream, and a 1 MiB range at its end.
  const big = Math.max(...SIZES_MIB) * MiB;
  const bigUrl = `${daemon.url}/stream/${bigId}`;
  const ttfbs: number[] = [], ranges: number[] = [];
  for (let i = 0; i < LATENCY_REPS; i++) {
    const t0 = performance.now();
    const res = await fetch(bigUrl, { headers: { authorization: `Bearer ${token}` } });
    const reader = res.body!.getReader();
    await reader.read();
    ttfbs.push(performance.now() - t0);
    await reader.cancel();
    ranges.push(
      (await getAll(client, `/stream/${bigId}`, token, `bytes=${big - MiB}-${big - 1}`)).ms,
    );
  }

  // Again after every round above: whether repeated streams keep adding to it.
  const later = await rssWhileStreaming();
  store.close();

  const loadEnd = await loadAverage();
  const at = new Date().toISOString();
  const secs = Math.round((performance.now() - started) / 1000);
  const table = rows.map((r) =>
    `| ${r.mib >= 1024 ? `${r.mib / 1024} GiB` : `${r.mib} MiB`} | ${r.rounds} | ${
      mbps(r.mib * MiB, r.rawMs)
    } | ${mbps(r.mib * MiB, r.streamMs)} | ${f2(r.ratio[0])} (${f2(r.ratio[1])}–${
      f2(r.ratio[2])
    }) ${r.ratio[0] >= 0.8 ? "✔" : "✘"} | ${mbps(r.mib * MiB, r.fetchMs)} (${f2(r.fetchRatio)}) |`
  ).join("\n");
  const ok = (v: number, limit: number) => (v < limit ? "✔" : "✘");
  const growth = fresh.peak - fresh.rest;
  const small = rows.find((r) => r.mib === uncached?.mib);
  const uncachedRow = uncached === undefined ? "" : `
| ${uncached.mib} MiB, the open not cached (first view of a file, or a changed file): the daemon checks the header MAC and the final chunk and sniffs chunk 0 first | ${
    f2(uncached.ms)
  } ms | ${f2(uncached.ratio)} |`;
  const c = small?.cpu;
  const cpuRows = c === undefined ? "" : `
| CPU per ${small!.mib} MiB \`/stream\` (all threads, /proc schedstat): the daemon | ${
    f2(c.daemon)
  } ms | |
| CPU per ${
    small!.mib
  } MiB \`/stream\`: the client reading it, \`bench/drivers/http_get.ts\` / \`fetch()\` | ${
    f2(c.self)
  } ms / ${f2(c.fetch)} ms | |
| CPU per raw decryption of the same ${small!.mib} MiB (benchmark process) | ${f2(c.raw)} ms | |`;
  const floorRows = floor === undefined ? "" : `
| the least \`/stream\` server (\`bench/baselines/stream_floor_server.ts\`: a bare \`Deno.serve\` decrypting the same 1 MiB from memory, four chunks in flight; no routing, token, store, file or log) | ${
    f2(floor.ms)
  } ms | ${f2(floor.ratio)} |
| CPU per 1 MiB from the least server (its process, all threads) | ${f2(floor.cpu)} ms | |`;
  const body = `## Protected files: \`/stream\` through the daemon

Produced by \`${command}\` (\`bench/scenarios/prv_stream.ts\`) on ${at}, ${secs} s for the section, on a
machine shared with other jobs (2 cores; 1-minute load average ${loadStart} at the start,
${loadEnd} at the end). One real daemon (production permission set) on the test relay; the
\`.prv\` files are written into its blob directory and registered in its store as its own
sent messages (a 1 GiB file cannot travel by mail), then read with \`POST /auth\` and
\`GET /stream/:msg_id\` over loopback HTTP: the daemon checks the token and the file's access, opens
the \`.prv\` (header MAC and final chunk, or what an earlier open of the unchanged file verified) and
decrypts chunk by chunk as the client reads.

**Baseline (raw):** \`crypto.subtle.decrypt\` AES-256-GCM over the same number of bytes in memory, in
64 KiB calls awaited one after another, in the benchmark process. Ratio = raw time ÷ \`/stream\` time
per paired round (order alternating), median and interquartile range; target ≥ 0.8. Before the
rounds: ${warmUpsFor(1)} unmeasured rounds at 1 MiB (one above), for both sides.

**Client:** the ratio's \`/stream\` is read by a minimal HTTP/1.1 client (\`bench/drivers/http_get.ts\`: one
keep-alive connection, the body read into one reused buffer and dropped): the client runs on the
same two cores as the daemon, and what it spends reading is taken from the daemon (\`fetch()\`
allocates each part anew; see the CPU rows); the last column is the same request read with
\`fetch()\`, for comparison.

| size | rounds | raw AES-GCM decrypt | \`/stream\` (HTTP, whole file) | ratio (IQR), target ≥ 0.8 | same via \`fetch()\` (ratio) |
| ---- | ------ | ------------------- | ---------------------------- | ------------------------- | --------------------------- |
${table}

| ${uncached?.mib ?? 1} MiB \`/stream\`, ${roundsFor(1)} rounds | median | ratio to raw |
| --- | --- | --- |${uncachedRow}${cpuRows}${floorRows}

| on the ${big / MiB} MiB file (${LATENCY_REPS} repetitions) | median | p95 | target |
| --- | --- | --- | --- |
| time to first byte of \`/stream\` (request sent → first body bytes; \`fetch()\`) | ${
    f2(median(ttfbs))
  } ms | ${f2(quantile(ttfbs, 0.95))} ms | < 20 ms ${ok(median(ttfbs), 20)} |
| 1 MiB \`Range\` at the end (request sent → last byte) | ${f2(median(ranges))} ms | ${
    f2(quantile(ranges, 0.95))
  } ms | < 20 ms ${ok(median(ranges), 20)} |

| daemon RSS while streaming the ${
    big / MiB
  } MiB file whole (VmRSS sampled every 20 ms) | fresh daemon | after all the rounds above |
| --- | --- | --- |
| at rest (after a 1 MiB range of that file) | ${fresh.rest} MB | ${later.rest} MB |
| peak | ${fresh.peak} MB | ${later.peak} MB |
| growth, target < 32 MB (on the fresh daemon) | **${growth} MB** ${ok(growth, 32)} | ${
    later.peak - later.rest
  } MB |
| throughput of that stream | ${mbps(fresh.whole.bytes, fresh.whole.ms)} | ${
    mbps(later.whole.bytes, later.whole.ms)
  } |

Notes: the raw baseline has no HTTP, no file and no per-file set-up. \`/stream\` pays per request the
routing and token check, the access check (two store reads), opening and \`fstat\` of the file, and
the response; the first open of a file (or of a changed one) also derives the keys (HKDF), checks the
header MAC, decrypts the final chunk (the length) and chunk 0 (the type) before the first byte — the
"open not cached" row. What that open verified is kept per file (\`prv_open_cache.ts\`: path, file
identity and a keyed tag of the content key; access is still checked on every request), so a file
viewed again skips it. A 1 MiB file is ${
    f2(rows[0]?.rawMs ?? 0)
  } ms of raw decryption; the 16 chunks of a \`/stream\` decrypt four at a time on WebCrypto's
threads, overlapping the HTTP writes, and from 100 MiB on the pipeline runs ahead of the raw
baseline, which decrypts one chunk at a time. At 1 MiB a \`/stream\` needs more CPU than the raw
decryption (the CPU rows: the same WebCrypto calls, plus HTTP on both ends) and gets its time back
only by running the daemon, WebCrypto's threads and the client on both cores at once; the raw
baseline needs one. So the 1 MiB ratio depends on how much of the second core other jobs leave
free at the time, and moves from run to run more than within one (the IQR). The least server row
bounds what is reachable: HTTP and WebCrypto alone, measured the same way, run above the target,
so at 1 MiB what keeps \`/stream\` under it is this gateway's own request path (the token and
access checks, the store reads, the file, the log line and the reader), not the machine.
`;
  const path = `${ROOT}BENCHMARKS.md`;
  const section = `${BEGIN}\n\n${body}\n${END}\n`;
  let text = await Deno.readTextFile(path).catch(() => "# Benchmarks\n");
  const a = text.indexOf(BEGIN), b = text.indexOf(END);
  if (a >= 0 && b > a) {
    text = text.slice(0, a) + section + text.slice(b + END.length).replace(/^\n/, "");
  } else text = `${text.replace(/\n*$/, "\n")}\n${section}`;
  await Deno.writeTextFile(path, text);
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path], cwd: ROOT }).output();
  console.log(section);
}

if (import.meta.main) await runPrvStreamSection();
