/**
 * The `.prv` section of BENCHMARKS.md (between `<!-- prv:begin -->` and `<!-- prv:end -->`,
 * replaced in place or appended, so the other sections' numbers stay as they are).
 */
import type { LargeResult, PrvBenchResult, RssResult, SizeResult } from "./prv.ts";

const ROOT = new URL("../", import.meta.url).pathname;
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
    } |`,
    `| ${size(b)} | encrypt pipeline, output dropped | | | | ${mbps(b, s.pipeMs)} | ${
      target(s.pipeRatio)
    } | | | |`,
    `| ${size(b)} | decrypt-stream | ${mbps(b, s.rawDecMs)} | ${mbps(b, s.rawDec4Ms)} | ${
      mbps(b, s.rawOneDecMs)
    } | ${mbps(b, s.decMs)} | ${target(s.decRatio)} | ${r2(s.decRatio4)} | ${
      r2(s.decRatioOne)
    } | |`,
  ].join("\n");
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
(\`bench/prv_rss_child.ts\`, sampled every 16 chunks; "at rest" is after a 1 MiB warm-up read):

| process | at rest | peak | growth | throughput | target |
| --- | --- | --- | --- | --- | --- |
${rssRow("ours: `openPrvFile` + `stream()`, bytes dropped", L.rss.fresh, true)}
${
    rssRow(
      "ours, run with `--v8-flags=--expose-gc` (the reader's minor GC every 4 MiB)",
      L.rss.gcHint,
      true,
    )
  }
${rssRow("ours, second stream (at rest = after one whole stream)", L.rss.second, false)}
${rssRow("baseline: raw WebCrypto decrypt, 64 KiB calls in memory", L.rss.raw, false)}
`;
}

/** The markdown of the section (between the markers). */
export function renderPrv(r: PrvBenchResult, command: string): string {
  const L = r.large;
  const rounds = r.sizes.map((s) => `${size(s.bytes)}: ${s.rounds}`).join(", ");
  return `## Protected files: the .prv container (encrypt, decrypt-stream)

Produced by \`${command}\` (\`bench/prv.ts\`; with \`BENCH_ONLY=prv\` only this section is
measured and rewritten, a full run rewrites it too). Run: ${r.started}, ${r.wallS.toFixed(0)} s for
the section, on a machine shared with other jobs (load varies during the run). Container:
docs/prv-format.md (AES-256-GCM STREAM, 64 KiB chunks, WebCrypto). This is the container half of
issue 11 §6; \`/stream\` over HTTP comes with the viewer step.

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
- **encrypt to file**: \`encryptToPrv(opened plaintext file, size, path.prv)\`: read, SHA-256 of
  the plaintext, seal, SHA-256 of the output, write to a temporary file, \`fdatasync\`, rename.
  **I/O floor**: copying the plaintext file to a new file with \`fdatasync\`, no crypto.
- **encrypt pipeline**: \`encryptPrv\` from the opened file to a sink that drops the bytes: the
  same reading, hashing and sealing without the write and the flush.
- **decrypt-stream**: \`openPrvFile\` (header MAC, final chunk) then \`reader.stream()\` read to
  the end by a consumer that drops the bytes.

| size | operation | raw AES-GCM | raw ×4 | raw, one call | ours | ratio vs raw (IQR), target ≥ 0.8 | vs raw ×4 | vs one call | I/O floor |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${r.sizes.map(rows).join("\n")}
${r.large ? large(r.large) : ""}
Notes:

- Encryption does more than AES over the bytes: two SHA-256 passes (plaintext and \`.prv\`,
  required by \`PrivittySendFileResult\`) on the main thread, and, to a file, a durable write:
  the \`fdatasync\` before the rename is what makes "no half file under the final name" hold across
  a power loss, and it costs what the I/O floor column shows. For 1 MiB the open, flush, rename and
  directory flush dominate whatever the crypto does.
- Decryption reads runs of 1, 2, 4, … 16 chunks with one read each (chunk 0 alone first, for the
  first byte), two runs in flight, decrypting one chunk at a time per run; read buffers are reused.
  What RSS grows by is garbage: WebCrypto returns a new buffer per call and copies its input (128
  KiB per chunk), and V8 collects them late — the raw baseline, which does nothing but those calls,
  grew ${L ? mb(L.rss.raw.growthKb) : "–"} here, and a second stream in the same process ${
    L ? mb(L.rss.second.growthKb) : "–"
  } (it varies from run to run). With \`gc\` exposed (\`--v8-flags=--expose-gc\`), the reader
  (\`src/protected_files/gc_hint.ts\`) runs a minor GC every 64 chunks, which frees those young
  buffers cheaply: ${L ? mb(L.rss.gcHint.growthKb) : "–"} growth at ${
    L ? mbps(L.rss.gcHint.bytes, L.rss.gcHint.ms) : "–"
  }. The daemon's start flags decide whether it runs so.
`;
}

/** Replaces (or appends) the section in BENCHMARKS.md and formats the file. */
export async function writePrvSection(r: PrvBenchResult, command: string): Promise<void> {
  const path = `${ROOT}BENCHMARKS.md`;
  const body = `${BEGIN}\n\n${renderPrv(r, command)}\n${END}\n`;
  let text = await Deno.readTextFile(path).catch(() => "# Benchmarks\n");
  const a = text.indexOf(BEGIN), b = text.indexOf(END);
  if (a >= 0 && b > a) {
    text = text.slice(0, a) + body + text.slice(b + END.length).replace(/^\n/, "");
  } else text = `${text.replace(/\n*$/, "\n")}\n${body}`;
  await Deno.writeTextFile(path, text);
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path], cwd: ROOT }).output();
  console.log(body);
}
