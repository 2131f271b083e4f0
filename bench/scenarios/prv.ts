/**
 * `.prv` container benchmark (issue 11 §6, container half), called from bench/drivers/run.ts (alone:
 * `BENCH_ONLY=prv deno task bench`): encrypt and decrypt-stream 1 MiB, 100 MiB and 1 GiB files
 * against raw WebCrypto AES-256-GCM over the same bytes in the same run (paired rounds), time to
 * first plaintext byte and a 1 MiB range read at the end of the 1 GiB file, and the RSS growth of
 * a process that decrypts the 1 GiB file (with the daemon's runtime flags and without), all of it
 * BENCH_PRV_RUNS times. Temporary files live in /tmp and are removed.
 */
import {
  CHUNK_SIZE,
  encryptPrv,
  encryptToPrv,
  openPrvFile,
  type PrvFileEncryption,
  tempNameFor,
  writeAll,
} from "../../src/prv/mod.ts";
import {
  type HostMemoryMode,
  hostMemoryMode,
  type PageCacheCost,
  pageCacheCost,
  requestedModes,
  withMemoryKept,
} from "../drivers/host_memory.ts";
import { FLOOR_MAX_BYTES, leastDurableWrite } from "../baselines/prv_floor.ts";
import { ivOf, randomAesKey } from "../baselines/raw_aes.ts";
import { writePrvSection } from "../drivers/prv_report.ts";

const HERE = new URL(".", import.meta.url).pathname;
const MiB = 1 << 20;
/** Plaintext sizes in MiB (`BENCH_PRV_SIZES=1,100` leaves the 1 GiB file out). */
const SIZES_MIB = (Deno.env.get("BENCH_PRV_SIZES") ?? "1,100,1024").split(",").map(Number);
/** Paired rounds per size: small files are quick and noisy, large ones slow and steady. */
const roundsFor = (mib: number) => mib <= 1 ? 30 : mib <= 100 ? 5 : 3;
/** Repetitions of the latency measurements on the largest file. */
const LATENCY_REPS = 25;
/** Largest plaintext measured with the one-call baseline. */
const ONE_SHOT_MAX = 128 * MiB;
/** Content source: a random window repeated, so baselines can hold "the same bytes" in memory. */
const WINDOW = 16 * MiB;

export const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
export const median = (xs: number[]) => quantile(xs, 0.5);

/** Results for one plaintext size (times in ms, medians over the rounds). */
export interface SizeResult {
  readonly bytes: number;
  readonly rounds: number;
  readonly rawEncMs: number;
  readonly rawEnc4Ms: number;
  /** One `crypto.subtle.encrypt` call over the whole plaintext in memory. */
  readonly rawOneEncMs: number;
  readonly rawOneDecMs: number;
  readonly encRatioOne: [number, number, number];
  readonly decRatioOne: [number, number, number];
  readonly encMs: number;
  /** Removing a `.prv` of that size: what writing over an existing one would add to encMs. */
  readonly replaceMs: number;
  /** encryptPrv into a temporary file renamed to the .prv, with no flush at all (bench only). */
  readonly noFlushMs: number;
  /** fdatasync, rename and directory fsync of a just-written file of the .prv's size. */
  readonly flushMs: number;
  /** encryptPrv from the opened file to a sink that drops the output: the container's CPU cost. */
  readonly pipeMs: number;
  readonly copyMs: number;
  readonly rawDecMs: number;
  readonly decMs: number;
  /** Medians of the per-round ratios raw ÷ ours (throughput ratio) and their IQR. */
  readonly encRatio: [number, number, number];
  readonly encRatio4: [number, number, number];
  readonly noFlushRatio: [number, number, number];
  readonly pipeRatio: [number, number, number];
  /** The least durable writer (bench/baselines/prv_floor.ts; up to 16 MiB, else NaN) and its ratio. */
  readonly leastMs: number;
  readonly leastRatio: [number, number, number];
  readonly decRatio: [number, number, number];
  readonly decRatio4: [number, number, number];
  readonly rawDec4Ms: number;
  /**
   * Process CPU time (all threads: WebCrypto's pool, the hash worker; from /proc/self/stat, 10 ms
   * ticks, summed over the rounds) per MiB: what each side costs whatever the machine's load.
   */
  readonly cpuMsPerMiB: { rawEnc: number; enc: number; pipe: number; rawDec: number; dec: number };
}

/** Latency and memory on the largest file. */
export interface LargeResult {
  readonly bytes: number;
  readonly ttfbMs: [number, number];
  readonly rangeMs: [number, number];
  /**
   * Fresh processes: ours with the daemon's runtime flags (scripts/permissions.sh, the target),
   * ours without them, ours on its second stream (daemon flags), raw WebCrypto decrypt of as
   * many bytes (no flags).
   */
  readonly rss: { daemon: RssResult; noFlags: RssResult; second: RssResult; raw: RssResult };
  /** The daemon's runtime flags, as scripts/permissions.sh defines them. */
  readonly daemonV8Flags: string;
}

export interface RssResult {
  readonly baseKb: number;
  readonly peakKb: number;
  readonly growthKb: number;
  readonly ms: number;
  readonly bytes: number;
}

export interface PrvBenchResult {
  readonly started: string;
  /** The machine's 1-minute load average (/proc/loadavg) when the run started and ended. */
  readonly load: [number, number];
  readonly wallS: number;
  readonly sizes: SizeResult[];
  readonly large?: LargeResult;
  /**
   * Whether this VM's kernel handed free memory back to its host during the run, and what a new
   * file's page cache cost, written into memory just freed and into memory freed 3 s before.
   */
  readonly hostMemory: { readonly mode: HostMemoryMode; readonly pageCache: PageCacheCost };
}

/** CPU time of this process so far (user + system, all threads), in ms; Linux. */
function cpuMs(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in 1/100 s
}

/** The 1-minute load average (runnable threads, all processes; the machine has 2 cores). */
const loadAverage = () => Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);

const window = new Uint8Array(WINDOW);
for (let at = 0; at < WINDOW; at += 65536) crypto.getRandomValues(window.subarray(at, at + 65536));

async function writePlaintext(path: string, bytes: number): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  for (let at = 0; at < bytes; at += WINDOW) {
    const part = window.subarray(0, Math.min(WINDOW, bytes - at));
    for (let off = 0; off < part.byteLength;) off += await f.write(part.subarray(off));
  }
}

const aesKey = await randomAesKey();
const windowChunks = WINDOW / CHUNK_SIZE;
/** The window encrypted once, chunk by chunk: what the raw decrypt baseline decrypts. */
const sealedWindow: Uint8Array<ArrayBuffer>[] = [];
for (let i = 0; i < windowChunks; i++) {
  const pt = window.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE);
  sealedWindow.push(
    new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: ivOf(i) }, aesKey, pt)),
  );
}

/**
 * Raw WebCrypto AES-256-GCM over `bytes` bytes of the same content in memory, in 64 KiB calls,
 * `parallel` of them in flight (1: one after another). Returns ms.
 */
async function rawAes(bytes: number, decrypt: boolean, parallel = 1): Promise<number> {
  const n = Math.ceil(bytes / CHUNK_SIZE);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const w = i % windowChunks;
      if (decrypt) {
        await crypto.subtle.decrypt({ name: "AES-GCM", iv: ivOf(w) }, aesKey, sealedWindow[w]);
      } else {
        const len = Math.min(CHUNK_SIZE, bytes - i * CHUNK_SIZE);
        const pt = window.subarray(w * CHUNK_SIZE, w * CHUNK_SIZE + len);
        await crypto.subtle.encrypt({ name: "AES-GCM", iv: ivOf(i) }, aesKey, pt);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: parallel }, worker));
  return performance.now() - t0;
}

/**
 * Raw WebCrypto with one call over the whole plaintext in memory (the plaintext and its
 * ciphertext are materialized first, untimed): the other reading of "raw AES over the bytes".
 */
async function oneShotAes(bytes: number) {
  const plain = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += WINDOW) {
    plain.set(window.subarray(0, Math.min(WINDOW, bytes - at)), at);
  }
  const iv = ivOf(0);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, aesKey, plain);
  const time = async (f: () => Promise<unknown>) => {
    const t0 = performance.now();
    await f();
    return performance.now() - t0;
  };
  return {
    encrypt: () => time(() => crypto.subtle.encrypt({ name: "AES-GCM", iv }, aesKey, plain)),
    decrypt: () => time(() => crypto.subtle.decrypt({ name: "AES-GCM", iv }, aesKey, sealed)),
  };
}

/** Ours: the plaintext file (opened) → `<path>.prv`, atomic and fsync'd, hashes included. */
async function encryptFile(src: string, bytes: number, dest: string) {
  using file = await Deno.open(src);
  const t0 = performance.now();
  const enc = await encryptToPrv(file, bytes, dest);
  return { ms: performance.now() - t0, enc };
}

/**
 * Removes an earlier round's output, after the step that wrote a new one, and times that.
 * Each timed encryption writes a new file (`secure_send_file` normally writes a new `.prv`):
 * renaming over the earlier round's would time its removal (freeing its blocks and cached
 * pages: ~190 ms for 1 GiB here), which is no encryption work. What replacing an existing
 * `.prv` adds is reported apart (`replaceMs`).
 */
async function removeTimed(path: string): Promise<number> {
  const t0 = performance.now();
  await Deno.remove(path);
  return performance.now() - t0;
}

/**
 * Ours without the flushes (bench only, to show what they cost): encryptPrv into a temporary
 * file beside `dest`, then renamed to it; no fdatasync, no directory fsync.
 */
async function encryptFileNoFlush(src: string, bytes: number, dest: string): Promise<number> {
  using file = await Deno.open(src);
  const t0 = performance.now();
  const tmp = tempNameFor(dest);
  {
    using out = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    await encryptPrv(file, bytes, (b) => writeAll(out, b));
  }
  await Deno.rename(tmp, dest);
  return performance.now() - t0;
}

/**
 * The flushes encryptToPrv adds for durability, alone: a file of `bytes` is written (untimed),
 * then timed: fdatasync, close, rename and the directory's fsync.
 */
async function flushCost(dir: string, bytes: number): Promise<number> {
  const tmp = `${dir}/.flush-probe`;
  const out = await Deno.open(tmp, { write: true, create: true, truncate: true });
  for (let at = 0; at < bytes; at += WINDOW) {
    await writeAll(out, window.subarray(0, Math.min(WINDOW, bytes - at)));
  }
  const t0 = performance.now();
  await out.syncData();
  out.close();
  await Deno.rename(tmp, `${dir}/flush-probe`);
  {
    using d = await Deno.open(dir, { read: true });
    await d.syncData();
  }
  const ms = performance.now() - t0;
  await Deno.remove(`${dir}/flush-probe`);
  return ms;
}

/** The pipeline alone: read, hash, seal, hash; the output is dropped instead of written. */
async function encryptPipeline(src: string, bytes: number): Promise<number> {
  using file = await Deno.open(src);
  const t0 = performance.now();
  await encryptPrv(file, bytes, () => Promise.resolve());
  return performance.now() - t0;
}

/** The I/O floor of encryption: copy the plaintext file to a new file and fdatasync it. */
async function copyFile(src: string, dest: string): Promise<number> {
  const t0 = performance.now();
  {
    using inp = await Deno.open(src);
    using out = await Deno.open(dest, { write: true, create: true, truncate: true });
    const buf = new Uint8Array(CHUNK_SIZE);
    for (let n; (n = await inp.read(buf)) !== null;) {
      for (let off = 0; off < n;) off += await out.write(buf.subarray(off, n));
    }
    await out.syncData();
  }
  return performance.now() - t0;
}

/** Ours: open the .prv and stream every plaintext byte to a consumer that drops them. */
async function decryptStream(path: string, cek: Uint8Array): Promise<number> {
  const t0 = performance.now();
  await using reader = await openPrvFile(path, cek);
  let total = 0;
  for await (const part of reader.stream()) total += part.byteLength;
  if (total !== reader.plaintextLength) throw new Error("short stream");
  return performance.now() - t0;
}

const ratios = (base: number[], ours: number[]): [number, number, number] => {
  if (base.length === 0) return [NaN, NaN, NaN];
  const r = base.map((b, i) => b / ours[i]);
  return [median(r), quantile(r, 0.25), quantile(r, 0.75)];
};

async function benchSize(
  dir: string,
  mib: number,
): Promise<{ r: SizeResult; enc: PrvFileEncryption }> {
  const bytes = mib * MiB;
  const src = `${dir}/plain-${mib}.bin`;
  await writePlaintext(src, bytes);
  const rounds = roundsFor(mib);
  const t = {
    rawEnc: [],
    rawEnc4: [],
    rawOneEnc: [],
    rawOneDec: [],
    enc: [],
    noFlush: [],
    flush: [],
    pipe: [],
    copy: [],
    rawDec: [],
    rawDec4: [],
    dec: [],
    least: [],
  } as Record<
    string,
    number[]
  >;
  const cpu: Record<string, number> = {};
  /** Times of removing the `.prv` of the round (or warm-up) before. */
  const removed: number[] = [];
  /** Outputs of earlier rounds, removed after the step that replaced them. */
  const earlier: string[] = [], earlierNoFlush: string[] = [];
  let noFlushPath: string | undefined;
  let enc!: PrvFileEncryption;
  // Not for the 1 GiB file: 3 GiB of one-shot buffers in this process would slow the rest.
  const oneShot = bytes <= ONE_SHOT_MAX ? await oneShotAes(bytes) : undefined;
  // Warm-up (JIT, thread pool, page cache).
  await rawAes(Math.min(bytes, 8 * MiB), false);
  enc = (await encryptFile(src, bytes, `${src}.prv`)).enc;
  await decryptStream(enc.path, enc.cek);
  for (let i = 0; i < rounds; i++) {
    // Alternate which side runs first, so neither always gets the warmer slot.
    const steps: [string, () => Promise<number>][] = [
      ["rawEnc", () => rawAes(bytes, false)],
      ["rawEnc4", () => rawAes(bytes, false, 4)],
      ...(oneShot
        ? [["rawOneEnc", oneShot.encrypt], ["rawOneDec", oneShot.decrypt]] as [
          string,
          () => Promise<number>,
        ][]
        : []),
      ["enc", async () => {
        earlier.push(enc.path);
        const r = await encryptFile(src, bytes, `${src}.${i}.prv`);
        enc = r.enc;
        return r.ms;
      }],
      ["noFlush", () => {
        if (noFlushPath) earlierNoFlush.push(noFlushPath);
        noFlushPath = `${src}.noflush.${i}.prv`;
        return encryptFileNoFlush(src, bytes, noFlushPath);
      }],
      ["flush", () => flushCost(dir, enc.prvSize)],
      ...(bytes <= FLOOR_MAX_BYTES
        ? [["least", async () => {
          const path = `${src}.least.${i}.prv`;
          earlierNoFlush.push(path); // removed after the step, untimed
          return (await leastDurableWrite(src, path, aesKey)).ms;
        }]] as [string, () => Promise<number>][]
        : []),
      ["pipe", () => encryptPipeline(src, bytes)],
      ["copy", () => copyFile(src, `${src}.copy`)],
      ["rawDec", () => rawAes(bytes, true)],
      ["rawDec4", () => rawAes(bytes, true, 4)],
      ["dec", () => decryptStream(enc.path, enc.cek)],
    ];
    if (i % 2 === 1) steps.reverse();
    for (const [name, run] of steps) {
      const c0 = cpuMs();
      t[name].push(await run());
      cpu[name] = (cpu[name] ?? 0) + cpuMs() - c0;
      // Earlier outputs go after the step, outside its time and CPU.
      for (const path of earlier.splice(0)) removed.push(await removeTimed(path));
      for (const path of earlierNoFlush.splice(0)) await Deno.remove(path);
    }
  }
  await Deno.remove(`${src}.copy`);
  if (noFlushPath) await Deno.remove(noFlushPath);
  await Deno.remove(src);
  const m = (k: string) => t[k].length ? median(t[k]) : NaN;
  return {
    enc,
    r: {
      bytes,
      rounds,
      rawEncMs: m("rawEnc"),
      rawEnc4Ms: m("rawEnc4"),
      rawOneEncMs: m("rawOneEnc"),
      rawOneDecMs: m("rawOneDec"),
      encRatioOne: ratios(t.rawOneEnc, t.enc),
      decRatioOne: ratios(t.rawOneDec, t.dec),
      encMs: m("enc"),
      replaceMs: median(removed),
      noFlushMs: m("noFlush"),
      flushMs: m("flush"),
      pipeMs: m("pipe"),
      copyMs: m("copy"),
      rawDecMs: m("rawDec"),
      rawDec4Ms: m("rawDec4"),
      decMs: m("dec"),
      encRatio: ratios(t.rawEnc, t.enc),
      encRatio4: ratios(t.rawEnc4, t.enc),
      noFlushRatio: ratios(t.rawEnc, t.noFlush),
      pipeRatio: ratios(t.rawEnc, t.pipe),
      leastMs: m("least"),
      leastRatio: ratios(t.rawEnc, t.least),
      decRatio: ratios(t.rawDec, t.dec),
      decRatio4: ratios(t.rawDec4, t.dec),
      cpuMsPerMiB: Object.fromEntries(
        ["rawEnc", "enc", "pipe", "rawDec", "dec"].map((k) => [k, cpu[k] / rounds / mib]),
      ) as SizeResult["cpuMsPerMiB"],
    },
  };
}

/** Time to the first plaintext bytes and a 1 MiB range at the end, each including the open. */
async function latencies(enc: PrvFileEncryption) {
  const ttfb: number[] = [], range: number[] = [];
  for (let i = 0; i < LATENCY_REPS; i++) {
    let t0 = performance.now();
    {
      await using reader = await openPrvFile(enc.path, enc.cek);
      const r = reader.stream().getReader();
      const first = await r.read();
      ttfb.push(performance.now() - t0);
      if (!first.value?.byteLength) throw new Error("no first byte");
      await r.cancel();
    }
    t0 = performance.now();
    {
      await using reader = await openPrvFile(enc.path, enc.cek);
      const n = reader.plaintextLength;
      const part = await reader.read(n - MiB, n);
      range.push(performance.now() - t0);
      if (part.byteLength !== MiB) throw new Error("short range");
    }
  }
  const q = (xs: number[]): [number, number] => [median(xs), quantile(xs, 0.95)];
  return { ttfbMs: q(ttfb), rangeMs: q(range) };
}

/** One run of bench/scenarios/prv_rss_child.ts (a fresh process) in `mode`. */
async function rssChild(
  mode: string,
  arg: string,
  options: { cekHex?: string; env?: Record<string, string>; flags?: string[] } = {},
): Promise<RssResult> {
  const read = arg.startsWith("/") ? `--allow-read=${arg}` : "--allow-read=/nonexistent";
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...options.flags ?? [],
      "--allow-env",
      read,
      `${HERE}prv_rss_child.ts`,
      mode,
      arg,
    ],
    env: options.env ?? {},
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const w = child.stdin.getWriter();
  if (options.cekHex) await w.write(new TextEncoder().encode(options.cekHex));
  await w.close();
  const out = await child.output();
  if (!out.success) throw new Error(`prv_rss_child ${mode} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!) as RssResult;
}

/** The daemon's runtime flags: DAEMON_V8_FLAGS of scripts/permissions.sh (one definition). */
async function daemonV8Flags(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-c", `. "${HERE}../../scripts/permissions.sh" && printf %s "$DAEMON_V8_FLAGS"`],
    stdout: "piped",
  }).output();
  const flags = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || !flags) throw new Error("scripts/permissions.sh defines no DAEMON_V8_FLAGS");
  return flags;
}

/** RSS growth while decrypting the whole file, each in a fresh process. */
async function rssWhileDecrypting(
  enc: PrvFileEncryption,
  flags: string,
): Promise<LargeResult["rss"]> {
  const cekHex = Array.from(enc.cek, (b) => b.toString(16).padStart(2, "0")).join("");
  const daemon = flags.split(" ");
  return {
    daemon: await rssChild("prv", enc.path, { cekHex, flags: daemon }),
    noFlags: await rssChild("prv", enc.path, { cekHex }),
    second: await rssChild("prv", enc.path, {
      cekHex,
      flags: daemon,
      env: { PRV_RSS_WARM_FULL: "1" },
    }),
    raw: await rssChild("raw", String(enc.plaintextSize)),
  };
}

/** Runs every measurement; temporary files are removed whatever happens. */
export async function prvBench(): Promise<PrvBenchResult> {
  const started = new Date().toISOString();
  const loadStart = loadAverage();
  const t0 = performance.now();
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "edge-prv-bench-" });
  try {
    const hostMemory = { mode: hostMemoryMode(), pageCache: await pageCacheCost(dir) };
    const sizes: SizeResult[] = [];
    let large: LargeResult | undefined;
    for (const mib of SIZES_MIB) {
      const { r, enc } = await benchSize(dir, mib);
      sizes.push(r);
      console.log(
        `prv ${mib} MiB: enc ×${r.encRatio[0].toFixed(2)} (no flush ×${
          r.noFlushRatio[0].toFixed(2)
        }, pipeline ×${r.pipeRatio[0].toFixed(2)}), dec ×${r.decRatio[0].toFixed(2)}`,
      );
      if (mib === Math.max(...SIZES_MIB)) {
        const flags = await daemonV8Flags();
        large = {
          bytes: r.bytes,
          ...await latencies(enc),
          rss: await rssWhileDecrypting(enc, flags),
          daemonV8Flags: flags,
        };
      }
      await Deno.remove(enc.path);
    }
    const load: [number, number] = [loadStart, loadAverage()];
    const wallS = (performance.now() - t0) / 1000;
    return { started, load, wallS, sizes, ...(large === undefined ? {} : { large }), hostMemory };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Whole runs of the section (`BENCH_PRV_RUNS`, default 3): the machine is shared and noisy. */
const RUNS = Math.max(1, Number(Deno.env.get("BENCH_PRV_RUNS") ?? 3));

/**
 * Runs the benchmark RUNS times and writes its section of BENCHMARKS.md. `BENCH_HOST_MEMORY`
 * (root): `keep` runs with free page reporting stopped, `both` does RUNS runs that way first and
 * then RUNS as the machine is (bench/drivers/host_memory.ts); the section's tables show the last run.
 */
export async function runPrvSection(
  command = "npx --yes deno@2.9.5 task bench",
): Promise<PrvBenchResult[]> {
  const hostMemory = Deno.env.get("BENCH_HOST_MEMORY");
  const modes = requestedModes(hostMemory);
  if (hostMemory) command = `BENCH_HOST_MEMORY=${hostMemory} ${command}`;
  const runs: PrvBenchResult[] = [];
  for (const mode of modes) {
    for (let i = 0; i < RUNS; i++) {
      console.log(`prv: run ${i + 1} of ${RUNS} (host memory ${mode})`);
      runs.push(mode === "kept" ? await withMemoryKept(prvBench) : await prvBench());
    }
  }
  await writePrvSection(runs, command);
  return runs;
}

if (import.meta.main) await runPrvSection("BENCH_ONLY=prv npx --yes deno@2.9.5 task bench");
