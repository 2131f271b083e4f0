// SSE fan-out client (Node, raw TCP): opens N connections to /events, waits until all are
// connected, reads the server's RSS, POSTs /publish?n=E, and times until every connection has
// seen E events. Prints one JSON line. usage: node sse_client.mjs PORT N E SERVER_PID
import net from "node:net";
import fs from "node:fs";

const [port, n, e, pid] = process.argv.slice(2).map(Number);
const rssKb = () =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
const counts = new Array(n).fill(0);
let connected = 0;
let done = 0;
let t0 = 0;
const sockets = [];
// The start of each published event's frame line (the product's shape: one data: line).
const MARK = '\ndata: {"type":"Info"';
const rssBefore = rssKb();
await new Promise((resolveAll) => {
  for (let i = 0; i < n; i++) {
    const s = net.connect(
      port,
      "127.0.0.1",
      () => s.write(`GET /events HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    let headers = false;
    let tail = "";
    s.setEncoding("utf8");
    s.on("data", (chunk) => {
      if (!headers) {
        headers = true;
        if (++connected === n) resolveAll();
      }
      const text = tail + chunk;
      let idx = -1, from = 0;
      while ((idx = text.indexOf(MARK, from)) >= 0) {
        counts[i]++;
        from = idx + MARK.length;
      }
      tail = text.slice(Math.max(from, text.length - MARK.length));
      if (counts[i] === e && t0) {
        counts[i]++;
        if (++done === n) finish();
      }
    });
    s.on("error", (err) => {
      console.error(String(err));
      process.exit(1);
    });
    sockets.push(s);
  }
});
await new Promise((r) => setTimeout(r, 300));
const rssIdle = rssKb();
t0 = performance.now();
await fetch(`http://127.0.0.1:${port}/publish?n=${e}&size=64`);
const timer = setTimeout(() => finish(true), 60_000);
function finish(timeout = false) {
  clearTimeout(timer);
  const ms = performance.now() - t0;
  console.log(JSON.stringify({
    clients: n,
    events: e,
    ms: Math.round(ms),
    timeout,
    delivered: counts.reduce((a, b) => a + Math.min(b, e), 0),
    rssBeforeKb: rssBefore,
    rssIdleKb: rssIdle,
    rssAfterKb: rssKb(),
    perIdleClientKb: Math.round((rssIdle - rssBefore) / n),
  }));
  for (const s of sockets) s.destroy();
  process.exit(0);
}
