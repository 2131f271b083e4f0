/**
 * One side of a direct transfer as its own process, for tests and the benchmark that put each side
 * in its own network namespace. JSON lines on stdin and stdout:
 *   argv[0] = JSON config {role: "send"|"receive", size, transferId, endpoint: P2pEndpointOptions}
 *   send:    prints {offer}, reads {answer}, runs, prints {progress}… and {outcome, rss}
 *   receive: reads {offer}, prints {answer} (or {refused}), runs, prints {progress}… {outcome, rss}
 * The file is generated (tests/_helpers/p2p_bytes.ts), never read from disk.
 */
import { P2pEndpoint, type P2pEndpointOptions } from "../../src/transport/p2p/mod.ts";
import { checkingSink, generatedSha256, generatedSource } from "./p2p_bytes.ts";

interface PeerConfig {
  role: "send" | "receive";
  size: number;
  transferId: string;
  endpoint: P2pEndpointOptions;
  /** The sender knows the SHA-256 without hashing 1 GiB again when the caller passes it. */
  sha256?: string;
}

const cfg = JSON.parse(Deno.args[0]!) as PeerConfig;
const stdin = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
let pending = "";
async function readLine(): Promise<string> {
  for (;;) {
    const nl = pending.indexOf("\n");
    if (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      return line;
    }
    const { value, done } = await stdin.read();
    if (done) throw new Error("stdin ended");
    pending += value;
  }
}
const say = (o: unknown) => console.log(JSON.stringify(o));
const next = async () => JSON.parse(await readLine());

// RSS at rest is taken right before the run (endpoint open, offer and answer made), so the growth
// is what moving the file costs, not the start-up.
let rssStart = Deno.memoryUsage().rss;
let rssPeak = rssStart;
const atRest = () => rssPeak = rssStart = Deno.memoryUsage().rss;
const sample = setInterval(() => rssPeak = Math.max(rssPeak, Deno.memoryUsage().rss), 100);
const onProgress = (p: { bytes: number }) => {
  rssPeak = Math.max(rssPeak, Deno.memoryUsage().rss);
  say({ progress: p.bytes });
};

const ep = await P2pEndpoint.open(cfg.endpoint);
try {
  if (cfg.role === "send") {
    const sha256 = cfg.sha256 ?? await generatedSha256(cfg.size);
    const out = await ep.offer({
      transferId: cfg.transferId,
      size: cfg.size,
      sha256,
      source: generatedSource(cfg.size),
    });
    say({ offer: out.offer });
    const { answer } = await next();
    atRest();
    const t0 = performance.now();
    const outcome = await out.run(answer ?? null, { onProgress });
    say({ outcome, ms: performance.now() - t0, rss: { start: rssStart, peak: rssPeak } });
  } else {
    const { offer } = await next();
    const sink = checkingSink();
    const inc = await ep.accept(offer, sink);
    if ("refused" in inc) {
      say({ refused: inc.refused });
    } else {
      say({ answer: inc.answer });
      atRest();
      const t0 = performance.now();
      const outcome = await inc.run({ onProgress });
      say({
        outcome,
        ms: performance.now() - t0,
        mismatches: sink.mismatches,
        rss: { start: rssStart, peak: rssPeak },
      });
    }
  }
} finally {
  clearInterval(sample);
  ep.close();
}
