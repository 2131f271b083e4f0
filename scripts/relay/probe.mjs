// @ts-check
// Readiness wait for start-relay.sh: probes every target in rounds until all answer, then exits 0;
// after TIMEOUT seconds it names the targets that never answered and exits 1. Targets:
// "HOST|PORT|GREETING[|tls]" (first line starts with GREETING), http://... (200), unix:PATH.
// usage: node probe.mjs TIMEOUT "127.0.0.1|14143|* OK" http://127.0.0.1:14080/health unix:/x/lmtp
import http from "node:http";
import net from "node:net";
import tls from "node:tls";

/** Resolves true when the first line from HOST:PORT starts with `greeting`. */
function probeGreeting(
  /** @type {string} */ host,
  /** @type {string} */ port,
  /** @type {string} */ greeting,
  /** @type {boolean} */ useTls,
) {
  return new Promise((resolve) => {
    const opts = { host, port: Number(port), rejectUnauthorized: false };
    const socket = useTls ? tls.connect(opts) : net.connect(opts);
    let text = "";
    const done = (/** @type {boolean} */ ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on("error", () => done(false));
    socket.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) done(text.startsWith(greeting));
    });
  });
}

/** Resolves true when GET `url` answers 200. */
function probeHttp(/** @type {string} */ url) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => {
      req.destroy();
      resolve(false);
    });
  });
}

/** Resolves true when a unix socket at `path` accepts a connection. */
function probeUnix(/** @type {string} */ path) {
  return new Promise((resolve) => {
    const socket = net.connect(path, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** @returns {Promise<boolean>} */
function probe(/** @type {string} */ target) {
  if (target.startsWith("http://")) return probeHttp(target);
  if (target.startsWith("unix:")) return probeUnix(target.slice(5));
  const [host, port, greeting, mode] = target.split("|");
  return probeGreeting(host, port, greeting, mode === "tls");
}

const [timeout, ...targets] = process.argv.slice(2);
const deadline = Date.now() + Number(timeout) * 1000;
let pending = targets;
while (pending.length > 0) {
  const ok = await Promise.all(pending.map(probe));
  pending = pending.filter((_, i) => !ok[i]);
  if (pending.length === 0) break;
  if (Date.now() > deadline) {
    console.error(`not ready after ${timeout} s: ${pending.join(" ")}`);
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 50));
}
