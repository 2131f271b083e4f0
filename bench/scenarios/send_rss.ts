/**
 * Memory of sending large files (issue 17 §0, the send side), called from bench/drivers/run.ts
 * (alone: `BENCH_ONLY=send-rss deno task bench`): two real gateways joined on the project's relay
 * with its message limit raised to 64 MiB so a 25 MiB file fits one mail; the receiver is stopped
 * after the join (its mailbox takes the mails), so only the sender works. For each case the
 * sender's peak RSS (Linux VmHWM, reset before the send through /proc/PID/clear_refs) is taken
 * from the `send_msg` call until the relay accepted the mail (state 20), against its rest level
 * just before. Baseline, same run: the same daemon sending a one-line text message.
 *
 * Writes its section of BENCHMARKS.md between `<!-- send-rss:begin -->` and `<!-- send-rss:end -->`.
 */
import { joinBySecureJoin } from "../../tests/_helpers/gateway_pair.ts";
import { GatewayPeer, RpcError } from "../../tests/_helpers/gateway_peer.ts";
import { startRelay } from "../../tests/_helpers/relay.ts";
import { rssMb } from "../../tests/_helpers/rss.ts";
import { writeBenchmarkSection } from "../drivers/benchmarks_md.ts";

const MiB = 1024 * 1024;
const RELAY_LIMIT = 64 * MiB;
const TARGET_MB = 64;
const BEGIN = "<!-- send-rss:begin -->";
const END = "<!-- send-rss:end -->";

/** One measured send. */
interface SendCase {
  readonly name: string;
  readonly fileBytes: number;
  readonly restMb: number;
  readonly peakMb: number;
  readonly ms: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resets the peak RSS (VmHWM) of `pid` to its current RSS; false where Linux does not allow it. */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

async function writeRandomFile(path: string, bytes: number): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  const chunk = new Uint8Array(MiB);
  for (let done = 0; done < bytes;) {
    const n = Math.min(chunk.length, bytes - done);
    for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(chunk.subarray(i, i + 65_536));
    for (let at = 0; at < n;) at += await f.write(chunk.subarray(at, n));
    done += n;
  }
}

/** Sends `data` (text or a file) and measures the sender until the relay accepted the mail. */
async function measure(
  gw: GatewayPeer,
  chatId: number,
  name: string,
  data: { text?: string; file?: string },
  fileBytes: number,
): Promise<SendCase> {
  const pid = gw.daemon.pid;
  await sleep(2_000); // the previous send's garbage settles
  const restMb = (await rssMb(pid)).now;
  const exact = await resetPeak(pid);
  let sampled = restMb;
  const sampler = setInterval(async () => {
    sampled = Math.max(sampled, (await rssMb(pid).catch(() => ({ now: 0 }))).now);
  }, 20);
  const t0 = performance.now();
  const id = await gw.call<number>("send_msg", 1, chatId, data);
  const state = await gw.poll(
    async () => (await gw.call<{ state: number }>("get_message", 1, id)).state,
    (s) => s >= 20,
    600_000,
  );
  const ms = performance.now() - t0;
  clearInterval(sampler);
  if (state === 24) {
    const m = await gw.call<{ error: string | null }>("get_message", 1, id);
    throw new Error(`${name}: the mail failed: ${m.error}`);
  }
  const peakMb = exact ? (await rssMb(pid)).peak : sampled;
  return { name, fileBytes, restMb, peakMb, ms };
}

/** Runs the scenario and writes its section. */
export async function runSendRssSection(
  command = "npx --yes deno@2.9.5 task bench",
): Promise<void> {
  await using relay = await startRelay({ filter: true, messageSizeLimit: RELAY_LIMIT });
  await using a = await GatewayPeer.start("A", relay);
  const b = await GatewayPeer.start("B", relay);
  const pair = await joinBySecureJoin(b, a);
  await b.stop(); // its mailbox keeps the mails; only the sender works
  const chat = pair.joinerChat;
  const files = `${a.dir.path}/data/files`;
  await Deno.mkdir(files, { recursive: true });

  const cases: SendCase[] = [];
  await a.call("send_msg", 1, chat, { text: "warm-up" });
  cases.push(await measure(a, chat, "text message (baseline)", { text: "hello" }, 0));
  await writeRandomFile(`${files}/big.bin`, 25 * MiB);
  cases.push(
    await measure(a, chat, "25 MiB file", { text: "", file: `${files}/big.bin` }, 25 * MiB),
  );
  await Deno.remove(`${files}/big.bin`);
  // The largest file one mail can carry: what the refusal of a file the size of the limit names,
  // asked right before with the same name and text (headers such as In-Reply-To count too).
  await writeRandomFile(`${files}/near.bin`, RELAY_LIMIT);
  let nearLimit = 0;
  try {
    await a.call("send_msg", 1, chat, { text: "", file: `${files}/near.bin` });
    throw new Error("a file the size of the relay's limit was accepted");
  } catch (err) {
    if (!(err instanceof RpcError)) throw err;
    nearLimit = Number(/the largest file that fits is (\d+) bytes/.exec(err.message)?.[1] ?? 0);
    if (nearLimit === 0) throw err;
  }
  await Deno.truncate(`${files}/near.bin`, nearLimit);
  cases.push(
    await measure(
      a,
      chat,
      "file near the limit",
      { text: "", file: `${files}/near.bin` },
      nearLimit,
    ),
  );
  await Deno.remove(`${files}/near.bin`);

  // The daemon's rest level: before its first measured send (memory a send took may stay).
  const rest = cases[0].restMb;
  const basePeak = cases[0].peakMb;
  const mb = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  const rows = cases.map((c) => {
    const growth = c.peakMb - rest;
    const ok = c.fileBytes === 0 ? "" : growth < TARGET_MB ? " ✔" : " ✘";
    return `| ${c.name} | ${c.fileBytes === 0 ? "—" : mb(c.fileBytes)} | ${c.restMb} MB | ` +
      `${c.peakMb} MB | ${growth} MB${ok} | ${(c.peakMb / basePeak).toFixed(2)} | ` +
      `${(c.ms / 1000).toFixed(1)} s |`;
  });
  const text = `## Sending large files: sender memory\n\n` +
    `\`${command}\` (section \`send-rss\`; alone: \`BENCH_ONLY=send-rss\`). Two gateways on the ` +
    `project's relay with its message limit raised to ${RELAY_LIMIT} bytes (so a 25 MiB file ` +
    `fits one mail); the receiver is stopped after the join. Peak RSS of the sending daemon ` +
    `(VmHWM, reset before each send) from \`send_msg\` until the relay accepted the mail; ` +
    `growth is over the daemon's rest level before the first measured send (${rest} MB; "before" ` +
    `is the level just before each send). Target: growth < ${TARGET_MB} MB. The file near the limit is ` +
    `the largest the refusal of a ${RELAY_LIMIT}-byte file names (${nearLimit} bytes). ` +
    `Baseline (same run): the same daemon sending a text message; ratio = peak ÷ the ` +
    `baseline's peak. Before streaming (issue 17): 820 MB peak for 25 MB, 1.35 GB for 60 MB.\n\n` +
    `| case | file | before | peak | growth | peak vs text | send → accepted |\n` +
    `| ---- | ---- | ------ | ---- | ------ | ------------ | --------------- |\n` +
    rows.join("\n") + "\n";
  await writeBenchmarkSection({ begin: BEGIN, end: END }, text);
}
