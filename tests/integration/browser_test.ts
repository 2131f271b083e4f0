/**
 * A real browser (Debian's headless chromium, installed by scripts/browser/install-chromium.sh)
 * as a web HMI: a page from another origin subscribes to a gateway's /events with EventSource
 * and calls /rpc with fetch. With `--cors` it reads the gateway's address and gets IncomingMsg
 * through `onmessage` for a text sent from a second gateway; without `--cors` the browser
 * refuses both.
 */
import assert from "node:assert/strict";
import { joinBySecureJoin, messagesById } from "../_helpers/gateway_pair.ts";
import { poll } from "../_helpers/poll.ts";
import { NO_RELAY } from "../_helpers/relay.ts";
import { makeTempDir, type TempDir } from "../_helpers/temp.ts";
import { TwoGateways } from "../_helpers/two_gateways.ts";

const CHROMIUM = "/usr/bin/chromium";

/** The HMI page: reports what the browser saw to its own origin's `/report`. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>HMI</title><script>
const gw = new URLSearchParams(location.search).get("gw");
const report = (r) => fetch("/report", { method: "POST", body: JSON.stringify(r) });
report({ step: "loaded" });
fetch(gw + "/rpc", {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", method: "get_config", params: [1, "addr"], id: 1 }),
}).then((r) => r.json()).then(
  (body) => report({ step: "rpc", result: body.result }),
  (err) => report({ step: "rpc-error", error: String(err) }),
);
const es = new EventSource(gw + "/events");
es.onopen = () => report({ step: "open" });
es.onmessage = (m) => report({ step: "message", id: m.lastEventId, data: JSON.parse(m.data) });
es.onerror = () => report({ step: "es-error", readyState: es.readyState });
</script>`;

/** One report of the page. */
interface Report {
  step: string;
  result?: unknown;
  error?: string;
  readyState?: number;
  id?: string;
  data?: { type: string; account_id: number; chat_id: number; msg_id: number };
}

/** Serves the page on 127.0.0.1 (an origin of its own) and collects its reports. */
function servePage(): { origin: string; reports: Report[]; server: Deno.HttpServer<Deno.NetAddr> } {
  const reports: Report[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method === "POST" && url.pathname === "/report") {
      reports.push(await req.json());
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/hmi") {
      return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
    }
    return new Response("not found", { status: 404 });
  });
  return { origin: `http://127.0.0.1:${server.addr.port}`, reports, server };
}

/** Headless chromium showing `url`, with a throwaway profile; stop it with `close()`. */
async function openBrowser(url: string): Promise<AsyncDisposable & { pid: number }> {
  const profile: TempDir = await makeTempDir("chromium");
  // setsid: chromium leads a process group of its own, so its helpers (zygote, renderers) are
  // stopped with it and no longer write into the profile while it is removed.
  const child = new Deno.Command("setsid", {
    args: [
      CHROMIUM,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile.path}`,
      url,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return {
    pid: child.pid,
    async [Symbol.asyncDispose]() {
      const signalGroup = (signal: Deno.Signal) => {
        try {
          Deno.kill(-child.pid, signal);
          return true;
        } catch {
          return false; // the whole group is gone
        }
      };
      signalGroup("SIGTERM");
      await child.status;
      const gone = await poll(() => Promise.resolve(!signalGroup("SIGCONT")), (g) => g, 5_000, 50);
      if (!gone) signalGroup("SIGKILL");
      await poll(() => Promise.resolve(!signalGroup("SIGCONT")), (g) => g, 5_000, 50);
      await profile.cleanup();
    },
  };
}

/** Waits until a report matches `pred`; returns it (fails with every report on timeout). */
async function waitReport(
  reports: Report[],
  pred: (r: Report) => boolean,
  timeoutMs = 30_000,
): Promise<Report> {
  const hit = await poll(
    () => Promise.resolve(reports.find(pred)),
    (r) => r !== undefined,
    timeoutMs,
  );
  assert.ok(hit, `no such report; got ${JSON.stringify(reports)}`);
  return hit;
}

Deno.test({
  name:
    "a browser page on another origin uses /rpc and /events with --cors, and is refused without",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const stat = await Deno.stat(CHROMIUM).catch(() => undefined);
    assert.ok(stat?.isFile, `${CHROMIUM} missing: run scripts/browser/install-chromium.sh as root`);
    await using gws = await TwoGateways.start({ name: "HMI GW", args: ["--cors"] }, "Field GW");
    const { a: open, b: closed } = gws;
    const page = servePage();
    try {
      const pair = await joinBySecureJoin(open, closed);

      // With --cors: the page reads the address over /rpc and subscribes to /events.
      const seen = page.reports;
      {
        await using _browser = await openBrowser(`${page.origin}/hmi?gw=${open.daemon.url}`);
        const rpc = await waitReport(seen, (r) => r.step === "rpc" || r.step === "rpc-error");
        assert.deepEqual(rpc, { step: "rpc", result: open.addr });
        await waitReport(seen, (r) => r.step === "open" || r.step === "es-error");
        assert.ok(seen.some((r) => r.step === "open"), JSON.stringify(seen));

        const sent = await closed.call<number>("send_msg", 1, pair.joinerChat, {
          text: "to the HMI",
        });
        assert.ok(sent > 9);
        const got = await waitReport(
          seen,
          (r) => r.step === "message" && r.data?.type === "IncomingMsg",
        );
        assert.equal(got.data!.account_id, 1);
        assert.equal(got.data!.chat_id, pair.inviterChat);
        assert.ok(Number(got.id) > 0, "the frame's id: reached EventSource.lastEventId");
        const [msg] = await messagesById(open, [got.data!.msg_id]);
        assert.equal(msg.text, "to the HMI");
        assert.equal(seen.filter((r) => r.step === "es-error").length, 0, JSON.stringify(seen));
      }

      // Without --cors: the same page is refused by the browser (fetch fails, EventSource closes).
      seen.length = 0;
      {
        await using _browser = await openBrowser(`${page.origin}/hmi?gw=${closed.daemon.url}`);
        const rpc = await waitReport(seen, (r) => r.step === "rpc" || r.step === "rpc-error");
        assert.equal(rpc.step, "rpc-error", JSON.stringify(seen));
        const es = await waitReport(seen, (r) => r.step === "open" || r.step === "es-error");
        assert.deepEqual(es, { step: "es-error", readyState: 2 }, "EventSource.CLOSED");
        const from = closed.events.length;
        await open.call<number>("send_msg", 1, pair.inviterChat, { text: "not for the page" });
        await closed.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, from);
        assert.deepEqual(seen.filter((r) => r.step === "message" || r.step === "rpc"), []);
      }
      // The refusal is the browser's: the gateway itself answers a plain request.
      const health = await fetch(`${closed.daemon.url}/health`);
      assert.equal(health.status, 200);
      assert.equal(health.headers.get("access-control-allow-origin"), null);
      await health.body?.cancel();
    } finally {
      await page.server.shutdown();
    }
  },
});
