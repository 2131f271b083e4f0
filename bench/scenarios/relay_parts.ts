/**
 * Files above the relay's limit as relay parts between two gateways (issue 17 §6), called from
 * bench/drivers/run.ts (alone: `BENCH_ONLY=relay-parts deno task bench`): two real gateways on the
 * project's relay with chatmail's real limit (31457280 bytes, learnt from SMTP SIZE), the direct
 * path off. For each file size: time from `send_msg` until B shows the message, the first
 * `TransferProgress` on each side, and the peak RSS of both daemons (VmHWM, reset before each
 * send). Baseline, same run, right after each send: the same payload as pre-built part mails of
 * the same sizes pushed through the same relay and downloaded by a raw IMAP client
 * (bench/baselines/relay_capacity.ts). Writes its section of BENCHMARKS.md between
 * `<!-- relay-parts:begin -->` and `<!-- relay-parts:end -->`.
 */
import { createHash } from "node:crypto";
import { DataDirLayout } from "../../src/constants.ts";
import { MAX_PART_BYTES } from "../../src/core/send/size_limit.ts";
import { joinBySecureJoin } from "../../tests/_helpers/gateway_pair.ts";
import type { GatewayPeer } from "../../tests/_helpers/gateway_peer.ts";
import { readStoredAccount } from "../../tests/_helpers/gateway_store.ts";
import { rssMb } from "../../tests/_helpers/rss.ts";
import { TwoGateways } from "../../tests/_helpers/two_gateways.ts";
import { buildPartMails, GATEWAY_WINDOW, relayCapacity } from "../baselines/relay_capacity.ts";
import { writeBenchmarkSection } from "../drivers/benchmarks_md.ts";

const BEGIN = "<!-- relay-parts:begin -->";
const END = "<!-- relay-parts:end -->";
const MiB = 1024 * 1024;
/** chatmail's limit (Postfix `message_size_limit`), the relay's default. */
const RELAY_LIMIT = 31_457_280;
/** The target: RSS growth over rest (issue 17 §0). */
const TARGET_MB = 64;
/** The throughput target against the relay's own capacity (issue 17 §6). */
const TARGET_RATIO = 0.8;
/** File sizes in MiB (`BENCH_RELAY_PARTS_MIB`, comma-separated; default 25, 100, 200). */
const SIZES_MIB = (Deno.env.get("BENCH_RELAY_PARTS_MIB") ?? "25,100,200").split(",").map(Number);
/** How long one transfer may take. */
const WAIT_MS = 900_000;

/** One measured transfer and its baseline. */
interface PartsCase {
  readonly fileBytes: number;
  readonly parts: number;
  readonly partBytes: number;
  readonly ms: number;
  readonly doneMs: number;
  readonly firstOutMs: number;
  readonly firstInMs: number;
  readonly restA: number;
  readonly peakA: number;
  readonly restB: number;
  readonly peakB: number;
  readonly hashOk: boolean;
  readonly baseMs: number;
  readonly baseWireBytes: number;
  readonly load: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = async () => (await Deno.readTextFile("/proc/loadavg")).split(" ")[0];

/** Resets the peak RSS (VmHWM) of `pid` to its current RSS (Linux `clear_refs` 5). */
async function resetPeak(pid: number): Promise<void> {
  await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
}

async function writeRandomFile(path: string, bytes: number): Promise<string> {
  const hash = createHash("sha256");
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  const chunk = new Uint8Array(MiB);
  for (let done = 0; done < bytes;) {
    const n = Math.min(chunk.length, bytes - done);
    for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(chunk.subarray(i, i + 65_536));
    hash.update(chunk.subarray(0, n));
    for (let at = 0; at < n;) at += await f.write(chunk.subarray(at, n));
    done += n;
  }
  return hash.digest("hex");
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  using f = await Deno.open(path);
  for await (const chunk of f.readable) hash.update(chunk);
  return hash.digest("hex");
}

/** Waits until `peer` learnt the relay's limit from SMTP SIZE. */
async function learntLimit(peer: GatewayPeer): Promise<number> {
  const info = await peer.poll(
    () => peer.call<Record<string, string>>("get_info", 1),
    (i) => i.max_message_bytes !== undefined,
    60_000,
  );
  return Number(info.max_message_bytes);
}

/** Runs the cases once. */
async function relayPartsBench(): Promise<{ cases: PartsCase[]; limits: number[] }> {
  // The direct path off; warnings only, so logging costs nothing.
  const env = { EDGE_P2P_LISTEN: "off", EDGE_LOG_LEVEL: "warn" };
  await using gws = await TwoGateways.start({ name: "A", env }, { name: "B", env }, {
    messageSizeLimit: RELAY_LIMIT,
  });
  const { relay, a, b } = gws;
  const pair = await joinBySecureJoin(a, b);
  const limits = [await learntLimit(a), await learntLimit(b)];
  const keys = {
    signer: readStoredAccount(`${a.dir.path}/data`),
    recipient: readStoredAccount(`${b.dir.path}/data`),
  };
  // The baseline's own accounts: no gateway reads their mailboxes.
  const sender = await relay.register();
  const receiver = await relay.register();
  const files = `${a.dir.path}/data/${DataDirLayout.FILES_DIR}`;
  await Deno.mkdir(files, { recursive: true });
  await a.call("send_msg", 1, pair.inviterChat, { text: "warm-up" });
  await b.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000);

  const cases: PartsCase[] = [];
  for (const mib of SIZES_MIB) {
    const fileBytes = mib * MiB;
    const path = `${files}/clip-${mib}.bin`;
    const sha = await writeRandomFile(path, fileBytes);
    await sleep(2_000); // the previous case's garbage settles
    const load = await loadAverage();
    const restA = (await rssMb(a.daemon.pid)).now, restB = (await rssMb(b.daemon.pid)).now;
    await resetPeak(a.daemon.pid);
    await resetPeak(b.daemon.pid);
    const fromA = a.events.length, fromB = b.events.length;
    const t0 = performance.now();
    const sent = await a.call<number>("send_msg", 1, pair.inviterChat, { text: "", file: path });
    const firstOut = await a.waitForEvent(
      (e) => e.event.type === "TransferProgress" && e.event.msg_id === sent,
      WAIT_MS,
      fromA,
    );
    const firstIn = await b.waitForEvent(
      (e) => e.event.type === "TransferProgress" && e.event.direction === "in",
      WAIT_MS,
      fromB,
    );
    const inc = await b.waitForEvent((e) => e.event.type === "IncomingMsg", WAIT_MS, fromB);
    const done = await a.waitForEvent(
      (e) => e.event.type === "TransferDone" && e.event.msg_id === sent,
      WAIT_MS,
      fromA,
    );
    const peakA = (await rssMb(a.daemon.pid)).peak, peakB = (await rssMb(b.daemon.pid)).peak;
    const t = await a.call<{ parts: number; total: number }>("get_transfer", 1, sent);
    const id = inc.event.msg_id as number;
    const got = (await b.call<Record<string, { file: string }>>("get_messages", 1, [id]))[id];
    const hashOk = (await sha256Of(got.file)) === sha;
    await Deno.remove(path);
    // The parts' payload: the largest a part may carry when that many parts hold the file.
    const partBytes = Math.ceil(fileBytes / MAX_PART_BYTES) === t.parts
      ? MAX_PART_BYTES
      : Math.ceil(fileBytes / t.parts / 1024) * 1024;
    const mails = await buildPartMails(keys, sender.email, fileBytes, partBytes);
    await sleep(2_000);
    const base = await relayCapacity(relay, sender, receiver, mails);
    cases.push({
      fileBytes,
      parts: t.parts,
      partBytes,
      ms: inc.t - t0,
      doneMs: done.t - t0,
      firstOutMs: firstOut.t - t0,
      firstInMs: firstIn.t - t0,
      restA,
      peakA,
      restB,
      peakB,
      hashOk,
      baseMs: base.ms,
      baseWireBytes: base.wireBytes,
      load,
    });
    console.log(JSON.stringify(cases.at(-1)));
  }
  return { cases, limits };
}

function render(
  r: { cases: readonly PartsCase[]; limits: readonly number[] },
  command: string,
  loads: readonly string[],
): string {
  const mbs = (bytes: number, ms: number) => (bytes / MiB / (ms / 1000)).toFixed(1);
  const rows = r.cases.map((c) => {
    const ratio = c.baseMs / c.ms;
    const ok = ratio >= TARGET_RATIO ? "✔" : "✘";
    return `| ${c.fileBytes / MiB} MiB | ${c.parts} × ${c.partBytes / MiB} MiB | ` +
      `${(c.ms / 1000).toFixed(1)} s (${mbs(c.fileBytes, c.ms)} MiB/s) | ` +
      `${(c.baseMs / 1000).toFixed(1)} s (${mbs(c.fileBytes, c.baseMs)} MiB/s) | ` +
      `${ratio.toFixed(2)} ${ok} | ${(c.firstOutMs / 1000).toFixed(2)} s | ` +
      `${(c.firstInMs / 1000).toFixed(2)} s | ${(c.doneMs / 1000).toFixed(1)} s | ${c.hashOk} | ` +
      `${c.load} |`;
  });
  const mem = r.cases.map((c) => {
    const ga = c.peakA - c.restA, gb = c.peakB - c.restB;
    const mark = (g: number) => g < TARGET_MB ? "✔" : "✘";
    return `| ${c.fileBytes / MiB} MiB | ${c.restA} MB | ${c.peakA} MB | +${ga} MB ${mark(ga)} | ` +
      `${c.restB} MB | ${c.peakB} MB | +${gb} MB ${mark(gb)} |`;
  });
  return `## Relay parts between gateways (\`bench/scenarios/relay_parts.ts\`)

Produced by \`${command}\` on ${new Date().toISOString()}; load average (1 min, 2 cores, other
jobs running) ${loads[0]} at the start and ${loads[1]} at the end, per case in the table. Two real
daemons (A sends, B receives) on the project's relay with chatmail's limit (${RELAY_LIMIT} bytes;
both learnt ${r.limits.join(" and ")} from SMTP \`SIZE\`), the direct path off
(\`EDGE_P2P_LISTEN=off\`), joined by SecureJoin. Each file (random bytes) goes with \`send_msg\`
as relay parts (docs/transfer.md); "parts" is time from \`send_msg\` until B's \`IncomingMsg\`
(every part fetched, verified and written, the whole file's SHA-256 checked; the received file's
SHA-256 is compared here too), "done" until A's \`TransferDone\` (B's confirmation came back).

Baseline (same run, right after each transfer): the relay's own capacity for the same bytes. The
same number of part mails of the same sizes, built before the clock starts exactly as A builds
them (the gateway's part MIME with a random payload, signed and encrypted with A's and B's keys,
in the outer envelope), submitted over SMTP from a fresh account with ${GATEWAY_WINDOW} in flight
(A's window for one transfer) while a raw IMAP client of a second fresh account downloads each
one whole and deletes it; timed from the first submission to the last download. Arrival in the
INBOX alone would leave out the IMAP download, which a receiver cannot skip, so that it would
charge the relay's own work to the gateways; the baseline's mailboxes are read by no gateway.
Ratio = baseline time ÷ parts time (same payload, so the throughput ratio); target ≥ ${TARGET_RATIO}.
"First progress": from \`send_msg\` to the first \`TransferProgress\` on A (\`out\`: a part
accepted by the relay) and on B (\`in\`: a part verified and written).

| file | parts | parts: send → shown | baseline: relay capacity | ratio (≥ ${TARGET_RATIO}) | first progress A | first progress B | send → done | SHA-256 equal | load |
| ---- | ----- | ------------------- | ------------------------ | ---------------- | ---------------- | ---------------- | ----------- | ------------- | ---- |
${rows.join("\n")}

Memory: VmRSS of each daemon 2 s after the previous case ("rest"), and its peak (VmHWM, reset
before \`send_msg\`) until A's \`TransferDone\`. Target: growth < ${TARGET_MB} MB.

| file | A rest | A peak | A growth | B rest | B peak | B growth |
| ---- | ------ | ------ | -------- | ------ | ------ | -------- |
${mem.join("\n")}
`;
}

/** Runs the cases and writes the section. */
export async function runRelayPartsSection(
  command = "npx --yes deno@2.9.5 task bench",
): Promise<void> {
  const load0 = await loadAverage();
  const r = await relayPartsBench();
  const load1 = await loadAverage();
  await writeBenchmarkSection({ begin: BEGIN, end: END }, render(r, command, [load0, load1]));
}
