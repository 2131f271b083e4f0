/**
 * The `.prv` section of BENCHMARKS.md (between `<!-- prv:begin -->` and `<!-- prv:end -->`,
 * replaced in place or appended, so the other sections' numbers stay as they are).
 */
import type { LargeResult, PrvBenchResult, RssResult, SizeResult } from "../scenarios/prv.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BEGIN = "<!-- prv:begin -->";
const END = "<!-- prv:end -->";
const MiB = 1 << 20;

const ms = (n: number) =>
  n >= 100 ? `${Math.round(n).toLocaleString("en-US")} ms` : `${n.toFixed(n < 10 ? 2 : 1)} ms`;
const mbps = (bytes: number, t: number) =>
  Number.isNaN(t) ? "–" : `${Math.round(bytes / MiB / (t / 1000)).toLocaleString("en-US")} MiB/s`;
const size = (b: number) => b >= 1024 * MiB ? `${b / 1024 / MiB} GiB` : `${b / MiB} MiB`;
const r2 = ([m, q1, q3]: [number, number, number]) =>
  Number.isNaN(m) ? "–" : `${m.toFixed(2)} (${q1.toFixed(2)}–${q3.toFixed(2)})`;
const check = (ok: boolean) => ok ? "✔" : "✘";
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;

function rows(s: SizeResult): string {
  const b = s.bytes;
  const target = (r: [number, number, number]) => `${r2(r)} ${check(r[0] >= 0.8)}`;
  return [
    `| ${size(b)} | encrypt to file | ${mbps(b, s.rawEncMs)} | ${mbps(b, s.rawEnc4Ms)} | ${
      mbps(b, s.rawOneEncMs)
    } | ${mbps(b, s.encMs)} | ${target(s.encRatio)} | ${r2(s.encRatio4)} | ${r2(s.encRatioOne)} | ${
      mbps(b, s.copyMs)
    } | ${ms(s.flushMs)} |`,
    `| ${size(b)} | encrypt to file, no flush (bench only) | | | | ${mbps(b, s.noFlushMs)} | ${
      r2(s.noFlushRatio)
    } | | | | |`,
    `| ${size(b)} | encrypt pipeline, output dropped | | | | ${mbps(b, s.pipeMs)} | ${
      r2(s.pipeRatio)
    } | | | | |`,
    ...(Number.isNaN(s.leastMs) ? [] : [
      `| ${size(b)} | least durable writer (bench only) | | | | ${mbps(b, s.leastMs)} | ${
        r2(s.leastRatio)
      } | | | | |`,
    ]),
    `| ${size(b)} | decrypt-stream | ${mbps(b, s.rawDecMs)} | ${mbps(b, s.rawDec4Ms)} | ${
      mbps(b, s.rawOneDecMs)
    } | ${mbps(b, s.decMs)} | ${target(s.decRatio)} | ${r2(s.decRatio4)} | ${
      r2(s.decRatioOne)
    } | | |`,
  ].join("\n");
}

function cpuRow(s: SizeResult): string {
  const c = s.cpuMsPerMiB;
  const f = (n: number) => `${n.toFixed(2)} ms`;
  return `| ${size(s.bytes)} | ${f(c.rawEnc)} | ${f(c.enc)} | ${f(c.pipe)} | ${f(c.rawDec)} | ${
    f(c.dec)
  } |`;
}

function rssRow(name: string, r: RssResult, withTarget: boolean): string {
  const t = withTarget ? `< 32 MB ${check(r.growthKb / 1024 < 32)}` : "";
  return `| ${name} | ${mb(r.baseKb)} | ${mb(r.peakKb)} | **${mb(r.growthKb)}** | ${
    mbps(r.bytes, r.ms)
  } | ${t} |`;
}

/** Chunks a 1 MiB range at the end of a file of `bytes` touches. */
const rangeChunks = (bytes: number) =>
  Math.floor((bytes - 1) / 65536) - Math.floor((bytes - MiB) / 65536) + 1;

function large(L: LargeResult): string {
  return `
| on the ${
    size(L.bytes)
  } file (page cache warm), each timed from \`openPrvFile\` | median | p95 | target |
| --- | --- | --- | --- |
| time to the first plaintext bytes (open, header MAC, final chunk, chunk 0) | ${
    ms(L.ttfbMs[0])
  } | ${ms(L.ttfbMs[1])} | < 20 ms ${check(L.ttfbMs[0] < 20)} |
| 1 MiB range read at the end of the file (${rangeChunks(L.bytes)} chunks) | ${
    ms(L.rangeMs[0])
  } | ${ms(L.rangeMs[1])} | < 20 ms ${check(L.rangeMs[0] < 20)} |

RSS while decrypting the whole ${size(L.bytes)} file, each in a fresh process
(\`bench/scenarios/prv_rss_child.ts\`, sampled every 16 chunks; "at rest" is after a 1 MiB warm-up read). The
daemon runs with \`${L.daemonV8Flags}\` (\`DAEMON_V8_FLAGS\` in \`scripts/permissions.sh\`, used by
\`deno task start\`, \`deno task dev\`, \`compile.sh\` and the tests), so the target row is that one:

| process | at rest | peak | growth | throughput | target |
| --- | --- | --- | --- | --- | --- |
${
    rssRow(
      `ours as the daemon runs (\`${L.daemonV8Flags}\`): \`openPrvFile\` + \`stream()\``,
      L.rss.daemon,
      true,
    )
  }
${rssRow("ours without that flag", L.rss.noFlags, false)}
${
    rssRow(
      "ours as the daemon runs, second stream (at rest = after one whole stream)",
      L.rss.second,
      false,
    )
  }
${rssRow("baseline: raw WebCrypto decrypt, 64 KiB calls in memory, no flag", L.rss.raw, false)}
`;
}

/** One line per target with its value in each run (the spread the noisy machine gives). */
function spread(runs: PrvBenchResult[]): string {
  const per = (f: (r: PrvBenchResult) => string) => runs.map(f).join(" · ");
  const lines: string[] = [];
  for (let i = 0; i < runs[0].sizes.length; i++) {
    const s = size(runs[0].sizes[i].bytes);
    const at = (r: PrvBenchResult) => r.sizes[i];
    lines.push(
      `| ${s}: encrypt to file (≥ 0.8) | ${per((r) => at(r).encRatio[0].toFixed(2))} |`,
      `| ${s}: encrypt to file, no flush | ${per((r) => at(r).noFlushRatio[0].toFixed(2))} |`,
      `| ${s}: encrypt pipeline | ${per((r) => at(r).pipeRatio[0].toFixed(2))} |`,
      ...(Number.isNaN(at(runs[0]).leastMs) ? [] : [
        `| ${s}: least durable writer | ${per((r) => at(r).leastRatio[0].toFixed(2))} |`,
      ]),
      `| ${s}: decrypt-stream (≥ 0.8) | ${per((r) => at(r).decRatio[0].toFixed(2))} |`,
    );
  }
  const cost = (r: PrvBenchResult) =>
    `${r.hostMemory.pageCache.warmMsPerMiB.toFixed(2)} / ${
      r.hostMemory.pageCache.coldMsPerMiB.toFixed(2)
    }`;
  lines.push(
    `| host memory: free pages handed back to the VM's host | ${per((r) => r.hostMemory.mode)} |`,
    `| new 1 GiB file's page cache, ms per MiB: memory just freed / freed 3 s before | ${
      per(cost)
    } |`,
    `| machine load (1-min average, 2 cores) at start → end | ${
      per((r) => `${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)}`)
    } |`,
  );
  if (runs.every((r) => r.large)) {
    const L = (r: PrvBenchResult) => r.large!;
    lines.push(
      `| time to first byte, median (< 20 ms) | ${per((r) => ms(L(r).ttfbMs[0]))} |`,
      `| 1 MiB range at the end, median (< 20 ms) | ${per((r) => ms(L(r).rangeMs[0]))} |`,
      `| RSS growth, daemon flags (< 32 MB) | ${per((r) => mb(L(r).rss.daemon.growthKb))} |`,
      `| RSS growth, no flag | ${per((r) => mb(L(r).rss.noFlags.growthKb))} |`,
    );
  }
  return `| target (median ratio vs raw, or value) | run 1 · run 2 · … |\n| --- | --- |\n${
    lines.join("\n")
  }`;
}

/** The median of `xs` (two decimals), or "–" when empty. */
const mid = (xs: number[]) =>
  xs.length === 0 ? "–" : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(2);

/**
 * The note on this VM's memory: what free page reporting costs a new file, and, when runs were
 * made both ways, the encrypt-to-file ratio per size with memory kept and as the VM runs.
 */
function hostMemoryNote(runs: PrvBenchResult[]): string {
  const kept = runs.filter((r) => r.hostMemory.mode === "kept");
  const reported = runs.filter((r) => r.hostMemory.mode === "reported");
  const cold = mid(runs.map((r) => r.hostMemory.pageCache.coldMsPerMiB));
  const warm = mid(runs.map((r) => r.hostMemory.pageCache.warmMsPerMiB));
  if (runs.every((r) => r.hostMemory.mode === "absent")) {
    return `- Host memory: this kernel has no free page reporting (nothing is handed back to a
  hypervisor); a new 1 GiB file's page cache cost ${warm} ms per MiB into memory just freed and ${cold} ms
  per MiB into memory freed 3 s before.`;
  }
  let text = `- Host memory. This VM hands free memory back to its host (virtio-balloon free page
  reporting, \`/sys/module/page_reporting\`), and touching such memory again costs a fault in
  the host: a new 1 GiB file's page cache cost ${cold} ms per MiB written into memory freed 3 s
  before and ${warm} ms per MiB into memory just freed (medians of the runs; the row "new 1 GiB
  file's page cache" above; the kernel keeps a few hundred MiB of freed memory unreported, so a
  smaller file rarely pays it). Raw AES works on buffers in memory it already holds and never pays this; the
  \`.prv\` and the I/O floor's copy are new files and pay it whenever the kernel gives them
  reported memory, which is why the 1 GiB encrypt row moves most between runs.
  Runs marked \`kept\` were made with reporting stopped for the run (\`BENCH_HOST_MEMORY=keep\`
  or \`both\`, as root: the kernel's \`page_reporting_order\` set above its largest block, put
  back afterwards), so memory stays the guest's as on a gateway without a hypervisor; runs marked
  \`reported\` leave the machine as it is.`;
  if (kept.length > 0 && reported.length > 0) {
    const per = runs[0].sizes.map((s, i) =>
      `${size(s.bytes)} ${mid(kept.map((r) => r.sizes[i].encRatio[0]))} kept against ${
        mid(reported.map((r) => r.sizes[i].encRatio[0]))
      } reported`
    ).join(", ");
    text += ` Encrypt to file, median ratio of the runs: ${per}.`;
  }
  return text;
}

/** What removing an existing `.prv` took, per size (what replacing one adds). */
const replaced = (r: PrvBenchResult) =>
  r.sizes.map((s) => `${ms(s.replaceMs)} at ${size(s.bytes)}`).join(", ");

/** The markdown of the section (between the markers); the tables show the last of `runs`. */
export function renderPrv(runs: PrvBenchResult[], command: string): string {
  const r = runs[runs.length - 1];
  const L = r.large;
  const small = r.sizes[0];
  const big = r.sizes[r.sizes.length - 1];
  const cpuOf = (n: number) => `${n.toFixed(2)} ms`;
  const rounds = r.sizes.map((s) => `${size(s.bytes)}: ${s.rounds}`).join(", ");
  const started = runs.map((x) => x.started).join(", ");
  const wall = runs.reduce((n, x) => n + x.wallS, 0);
  return `## Protected files: the .prv container (encrypt, decrypt-stream)

Produced by \`${command}\` (\`bench/scenarios/prv.ts\`; with \`BENCH_ONLY=prv\` only this section is
measured and rewritten, a full run rewrites it too; \`BENCH_PRV_RUNS\` runs, default 3). Runs:
${started}; ${wall.toFixed(0)} s in all, on a 2-core machine shared with other jobs (load varies
during a run, which moves the ratios more than any change below). Container: docs/prv-format.md
(AES-256-GCM STREAM, 64 KiB chunks, WebCrypto). This is the container half of issue 11 §6;
\`/stream\` over HTTP comes with the viewer step.

Every run, across runs (the tables below show the last one):

${spread(runs)}

Paired rounds (${rounds}), the order reversed every other round; throughputs are medians, ratios
the median of the per-round ratios raw time ÷ our time (above 1: faster than the baseline), with
their interquartile range. Plaintext: a random 16 MiB window repeated, in a file in /tmp (ext4)
written before the rounds; every temporary file is removed after.

- **raw AES-GCM** (the target's baseline): \`crypto.subtle.encrypt\` / \`decrypt\` with
  AES-256-GCM over the same number of bytes of the same content in memory, in 64 KiB calls
  awaited one after another. **raw ×4**: the same with 4 calls in flight. **raw, one call**: a
  single \`crypto.subtle.encrypt\` / \`decrypt\` over the whole plaintext (or ciphertext) in
  memory, the other way to read "raw AES-GCM over the same bytes" (up to 100 MiB: for 1 GiB its
  3 GiB of buffers would slow everything else in the process).
- **encrypt to file** (the target): \`encryptToPrv(opened plaintext file, size, path.prv)\`:
  read, seal, SHA-256 of the plaintext and of the output, write to a temporary file,
  \`fdatasync\`, rename, directory fsync. Each round writes a new \`.prv\`, as
  \`secure_send_file\` normally does, and the earlier round's is removed after, untimed (until
  2026-11-24 every round renamed over it, which timed its removal; replacing an existing \`.prv\`
  adds that: ${replaced(r)}). **I/O floor**: copying the plaintext file to a new file
  with \`fdatasync\`, no crypto. **flush**: what the durability costs alone: \`fdatasync\`, rename
  and directory fsync of a just-written file of the \`.prv\`'s size.
- **encrypt to file, no flush** (bench only, not an API): \`encryptPrv\` into a temporary file
  renamed to the \`.prv\`, without \`fdatasync\` or directory fsync: the same work minus the flush,
  except that a sink may keep its buffers, so each batch is copied for the hash worker and none is
  reused (which can make it slower than encrypt to file at 1 GiB).
- **encrypt pipeline**: \`encryptPrv\` from the opened file to a sink that drops the bytes: the
  same reading, hashing and sealing without the write and the flush (through a sink, so copied for
  hashing as in the row above).
- **least durable writer** (bench only, up to 16 MiB: \`bench/baselines/prv_floor.ts\`): the least any
  writer of the same durable result must do, with nothing of ours in it: the file read at once,
  all its chunks sealed in flight together, the plaintext's SHA-256 while they seal, one write,
  \`fdatasync\` with the output's SHA-256 beside it, rename, directory fsync; no header, no key
  derivation. It bounds what any change to the writer could reach here.
- **decrypt-stream**: \`openPrvFile\` (header MAC, final chunk) then \`reader.stream()\` read to
  the end by a consumer that drops the bytes.

| size | operation | raw AES-GCM | raw ×4 | raw, one call | ours | ratio vs raw (IQR), target ≥ 0.8 | vs raw ×4 | vs one call | I/O floor | flush |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${r.sizes.map(rows).join("\n")}

CPU time per MiB (the process, all threads, summed over the rounds; 10 ms ticks, so rough for
${size(small.bytes)}), whatever the load: a ratio of 0.8 needs our CPU time spread over
cores ≤ raw's wall time ÷ 0.8.

| size | raw AES-GCM encrypt | encrypt to file | encrypt pipeline | raw AES-GCM decrypt | decrypt-stream |
| --- | --- | --- | --- | --- | --- |
${r.sizes.map(cpuRow).join("\n")}
${L ? large(L) : ""}
Notes:

- Where the time goes in encryption: WebCrypto AES-256-GCM runs at roughly 600–800 MiB/s per
  core here, SHA-256 (SHA-NI) at roughly 1.9 GiB/s, and encryption hashes twice (the plaintext and
  the \`.prv\`, both required by \`PrivittySendFileResult\`) and writes: for ${
    size(big.bytes)
  }, encrypting to a file took ${cpuOf(big.cpuMsPerMiB.enc)} of CPU per MiB against raw AES's ${
    cpuOf(big.cpuMsPerMiB.rawEnc)
  } (table above), ${
    (big.cpuMsPerMiB.enc / big.cpuMsPerMiB.rawEnc).toFixed(1)
  }×. Raw AES awaits one call after another and so
  uses one core; the writer seals each 1 MiB batch's 16 chunks in parallel on WebCrypto's thread
  pool and, from 16 MiB, hashes on a worker thread (\`src/prv/sha256_worker.ts\`,
  buffers moved to it and back, not copied), so it reaches 0.8× when about ${
    (0.8 * big.cpuMsPerMiB.enc / big.cpuMsPerMiB.rawEnc).toFixed(1)
  } cores are free for it (0.8 × that CPU ratio), and falls below when other jobs hold them (this
  machine has 2): that, not the code, is most of the spread across runs above.
- The flush is kept (it is what makes "no half file under the final name" hold across a power
  loss, and the file durable before the message that names it is stored). For large files it is
  overlapped: the writer starts a background \`fdatasync\` every 16 MiB, so the final one has
  little left. The early flushes run on a second handle of the temporary file: Deno runs the
  operations of one handle one after another, so on the writing handle (until 2026-11-24) each
  early flush held up every write behind it. Measured apart (1 GiB written in 1 MiB writes with
  the CPU work of two hashes between them, three runs each): the writes waited 505–1,083 ms in
  all with the flushes on the writing handle, 321–674 ms with them on a second handle; traced in
  the writer at 1 GiB, 2.1–2.9 s before, 1.9–2.4 s after. The **flush** column times a file
  written with no early flush; in the writer the final \`fdatasync\` of a 1 GiB file took 0–3 ms
  (traced), so what remains between "encrypt to file" and "no flush" is the early flushes' disk
  work competing with the writing, not a flush left at the end.
- For ${size(small.bytes)} the flush cannot be overlapped, and the ${
    size(small.bytes)
  } baseline is not a like-for-like comparison: raw AES there is 16 calls on bytes already in
  memory, ${ms(small.rawEncMs)} in all, so 0.8× leaves ${
    ms(small.rawEncMs / 0.8)
  } for everything, while a durable file costs a fixed amount whatever its size — the flush alone
  (\`fdatasync\`, rename, directory fsync) took ${
    ms(small.flushMs)
  }, and creating and writing the file cost more. Without the flush the same encryption runs at ${
    r2(small.noFlushRatio)
  } of raw, and with no file at all (pipeline) at ${
    r2(small.pipeRatio)
  }; the least durable writer (row above), with no header, no key derivation and every step
  overlapped, reaches ${r2(small.leastRatio)}: the target is out of reach of any writer at this
  size on this machine, not only of ours. What the writer does about the fixed cost: the first batch is read while the keys are
  derived and the temporary file created, the header goes out in the same write as the chunks,
  the end-of-source check runs beside the sealing, and a one-batch file hashes both only while the
  final \`fdatasync\` runs. That fixed per-file cost, not throughput, is what the ${
    size(small.bytes)
  } encrypt ratio measures; the ${
    size(small.bytes)
  } decrypt ratio likewise carries the open (header MAC, key derivation, final chunk: most of the
  time to first byte above).
${hostMemoryNote(runs)}
- The daemon's \`secure_send_file\` reads the checked file at offsets straight into the batches
  (\`AttachableFile.readAt\`), which measured apart runs as fast as the opened \`Deno.FsFile\`
  measured here (1 MiB: 3.06 against 3.12 ms; 100 MiB: 282 against 292 ms, loaded machine). Until
  2026-11-24 it went through a \`ReadableStream\` of 256 KiB reads copied into batches: 3–12%
  slower (1 MiB: 3.14 against 2.81 ms; 100 MiB: 203 against 179 ms, idle machine).
`;
}

/** Replaces (or appends) the section in BENCHMARKS.md and formats the file. */
export async function writePrvSection(runs: PrvBenchResult[], command: string): Promise<void> {
  const path = `${ROOT}BENCHMARKS.md`;
  const body = `${BEGIN}\n\n${renderPrv(runs, command)}\n${END}\n`;
  let text = await Deno.readTextFile(path).catch(() => "# Benchmarks\n");
  const a = text.indexOf(BEGIN), b = text.indexOf(END);
  if (a >= 0 && b > a) {
    text = text.slice(0, a) + body + text.slice(b + END.length).replace(/^\n/, "");
  } else text = `${text.replace(/\n*$/, "\n")}\n${body}`;
  await Deno.writeTextFile(path, text);
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path], cwd: ROOT }).output();
  console.log(body);
}
