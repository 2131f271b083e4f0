/**
 * The direct path over QUIC (issue 17 §6): 1 GiB from a sender in one network namespace to a
 * receiver in another over a veth pair, against a bare Deno QUIC stream of the same bytes between
 * the same namespaces (bench/baselines/quic_bare.ts), paired rounds in alternating order; and both
 * sides' RSS growth. Needs root (namespaces); runs inside the benchmark's isolated namespace.
 */
import { writeBenchmarkSection } from "../drivers/benchmarks_md.ts";
import { NetLab } from "../../tests/_helpers/netns.ts";
import { generatedSha256 } from "../../tests/_helpers/p2p_bytes.ts";
import { PeerProcess, runPair } from "../../tests/_helpers/p2p_process.ts";

const MiB = 1024 * 1024;
const SIZE = Number(Deno.env.get("BENCH_P2P_MIB") ?? 1024) * MiB;
const ROUNDS = Number(Deno.env.get("BENCH_P2P_ROUNDS") ?? 3);
const BARE = new URL("../baselines/quic_bare.ts", import.meta.url).pathname;

/** Reads JSON lines from a child's stdout. */
function lines(child: Deno.ChildProcess): () => Promise<Record<string, unknown>> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  return async () => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return JSON.parse(line);
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the baseline ended early");
      buf += value;
    }
  };
}

function spawnIn(ns: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      ns,
      Deno.execPath(),
      "run",
      "-A",
      "--unstable-net",
      "--v8-flags=--expose-gc",
      ...args,
    ],
    stdout: "piped",
    stderr: "inherit",
    env: { MALLOC_MMAP_THRESHOLD_: "4194304" }, // as scripts/start.sh and the image run the daemon
  }).spawn();
}

interface Round {
  ms: number;
  senderGrowth: number;
  receiverGrowth: number;
}

async function bare(a: string, b: string): Promise<Round> {
  const server = spawnIn(b, [BARE, "server"]);
  const fromServer = lines(server);
  const hello = await fromServer();
  const client = spawnIn(a, [
    BARE,
    "client",
    JSON.stringify({ ...hello, host: "10.77.0.2", size: SIZE }),
  ]);
  const c = await lines(client)();
  const s = await fromServer();
  await Promise.all([client.status, server.status]);
  if (s.bytes !== SIZE) throw new Error(`bare QUIC delivered ${s.bytes} bytes`);
  const g = (r: unknown) =>
    (r as { start: number; peak: number }).peak - (r as { start: number }).start;
  return { ms: c.ms as number, senderGrowth: g(c.rss), receiverGrowth: g(s.rss) };
}

async function direct(a: string, b: string, sha256: string): Promise<Round> {
  const base = { size: SIZE, transferId: `bench-${crypto.randomUUID()}`, endpoint: {} };
  const sender = new PeerProcess(a, { ...base, role: "send", sha256 });
  const receiver = new PeerProcess(b, { ...base, role: "receive" });
  try {
    const r = await runPair(sender, receiver);
    if (!r.sender.outcome.ok || !r.receiver?.outcome.ok || r.receiver.mismatches !== 0) {
      throw new Error(`direct transfer failed: ${JSON.stringify(r)}`);
    }
    const g = (x: { rss: { start: number; peak: number } }) => x.rss.peak - x.rss.start;
    return {
      ms: r.receiver.ms,
      senderGrowth: g(r.sender as never),
      receiverGrowth: g(r.receiver as never),
    };
  } finally {
    await Promise.all([sender.stop(), receiver.stop()]);
  }
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const mibs = (ms: number) => `${(SIZE / MiB / (ms / 1000)).toFixed(0)} MiB/s`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** Runs the rounds and writes the section of BENCHMARKS.md. */
export async function runP2pSection(command = "BENCH_ONLY=p2p npx --yes deno@2.9.5 task bench") {
  await using lab = new NetLab("bench");
  const t0 = Date.now();
  const load0 = (await Deno.readTextFile("/proc/loadavg")).split(" ")[0];
  const a = await lab.ns("a"), b = await lab.ns("b");
  await lab.link(a, "p2pa", "10.77.0.1/24", b, "p2pb", "10.77.0.2/24");
  const sha256 = await generatedSha256(SIZE);
  const bares: Round[] = [], directs: Round[] = [], ratios: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const pair = i % 2 === 0
      ? [await bare(a, b), await direct(a, b, sha256)]
      : [await direct(a, b, sha256), await bare(a, b)].reverse();
    bares.push(pair[0]!);
    directs.push(pair[1]!);
    ratios.push(pair[0]!.ms / pair[1]!.ms);
    console.error(`p2p round ${i + 1}: bare ${mibs(pair[0]!.ms)}, direct ${mibs(pair[1]!.ms)}`);
  }
  const load1 = (await Deno.readTextFile("/proc/loadavg")).split(" ")[0];
  const ratio = median(ratios);
  const sG = Math.max(...directs.map((r) => r.senderGrowth));
  const rG = Math.max(...directs.map((r) => r.receiverGrowth));
  const ok = (b: boolean) => (b ? "✔" : "✘");
  const text = [
    `Produced by \`${command}\` (\`bench/scenarios/p2p.ts\`) on ${new Date().toISOString()}, ` +
    `${((Date.now() - t0) / 1000).toFixed(0)} s for the section, on a machine shared with other ` +
    `jobs (2 cores; 1-minute load average ${load0} at the start, ${load1} at the end). ` +
    `Two network namespaces joined by a veth pair; each side is its own process ` +
    `(\`tests/_helpers/p2p_peer.ts\`): the sender streams a generated ${SIZE / MiB} MiB file ` +
    `(no disk), the receiver checks every chunk, hashes the whole and counts it. ` +
    `Time: the receiver's run, connect to verified end.`,
    "",
    `**Baseline:** \`bench/baselines/quic_bare.ts\`: one bare Deno QUIC stream of the same bytes ` +
    `between the same namespaces (no offer, token, framing, sink or hash). Ratio = bare time ÷ ` +
    `direct time per paired round (order alternating), median; target ≥ 0.8. Both run as the ` +
    `daemon runs (\`--v8-flags=--expose-gc\`, \`MALLOC_MMAP_THRESHOLD_=4194304\`).`,
    "",
    "| size | rounds | bare QUIC stream | direct path | ratio, target ≥ 0.8 |",
    "| ---- | ------ | ---------------- | ----------- | ------------------- |",
    `| ${SIZE / MiB} MiB | ${ROUNDS} | ${mibs(median(bares.map((r) => r.ms)))} | ${
      mibs(median(directs.map((r) => r.ms)))
    } | ${ratio.toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) ${
      ok(ratio >= 0.8)
    } |`,
    "",
    "| RSS growth (peak − at start, sampled every 100 ms), largest of the rounds | direct path | bare QUIC |",
    "| ------------------------------------------------------------------------- | ----------- | --------- |",
    `| sender, target < 64 MB | **${mb(sG)}** ${ok(sG < 64e6)} | ${
      mb(Math.max(...bares.map((r) => r.senderGrowth)))
    } |`,
    `| receiver, target < 64 MB | **${mb(rG)}** ${ok(rG < 64e6)} | ${
      mb(Math.max(...bares.map((r) => r.receiverGrowth)))
    } |`,
    "",
    `RSS at start is taken once the connection is up (bare) or the offer and answer are made ` +
    `(direct), so the growth is what moving the bytes costs. The direct path asks V8 for a minor ` +
    `GC every 4 MiB moved (\`src/transport/p2p/gc_hint.ts\`): each QUIC read and each source ` +
    `chunk is a new buffer, and without the hint V8 collects them late, as the bare stream's ` +
    `column shows.`,
    "",
  ].join("\n");
  await writeBenchmarkSection({
    begin: "<!-- p2p:begin -->",
    end: "<!-- p2p:end -->",
    under: "## Direct path over QUIC (1 GiB between two namespaces)",
  }, text);
}

if (import.meta.main) await runP2pSection();
