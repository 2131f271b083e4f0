/**
 * Runs the real daemon as a subprocess through `scripts/start.sh` (the production permission
 * set) against a test relay, with helpers to call `/rpc`, wait for `/health` and stop it by PID.
 */
import { freePort } from "./ports.ts";
import type { Relay } from "./relay.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Options of {@link spawnDaemon}. */
export interface SpawnDaemonOptions {
  readonly relay: Relay;
  readonly dataDir: string;
  /** `EDGE_PROFILE`; `null` leaves it unset. Default "Test gateway". */
  readonly profile?: string | null;
  readonly port?: number;
  readonly env?: Record<string, string> | undefined;
  readonly args?: readonly string[] | undefined;
  /**
   * Start it the way the product documents (docs/product-compat.md#daemon-flags, #environment):
   * `--listen 127.0.0.1:PORT --accounts DIR` instead of `--host/--port/--data-dir`, and PRIVITTY_*
   * instead of EDGE_* variables.
   */
  readonly productForm?: boolean;
  /** Start through `deno task start` (the deno task runner in front) instead of start.sh. */
  readonly viaTask?: boolean;
  /** Start in a process group of its own (`setsid`): its id is the daemon's `pid`. */
  readonly ownProcessGroup?: boolean;
  /** `ulimit -n` for the daemon (soft and hard): how many file descriptors it may open. */
  readonly fileLimit?: number;
  /**
   * Another machine: this file is bind-mounted over `/etc/machine-id` for the daemon alone (a
   * private mount namespace; needs root, as the relay tests have), so its device fingerprint
   * differs from every other daemon's on this host.
   */
  readonly machineIdFile?: string;
}

/** A daemon subprocess. */
export interface DaemonProcess extends AsyncDisposable {
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** Everything the daemon wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process ends. */
  readonly exited: Promise<number>;
  /** Polls `/health` until 200; throws with the daemon's output on timeout or early exit. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** Calls a JSON-RPC method; resolves with the parsed body (or null for HTTP 204). */
  rpc(method: string, params?: unknown[]): Promise<Record<string, unknown> | null>;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code (SIGKILL after 15 s). */
  stop(signal?: Deno.Signal): Promise<number>;
}

/** Starts `deno task start`'s script with the relay as `EDGE_SERVER`. */
export function spawnDaemon(opts: SpawnDaemonOptions): DaemonProcess {
  const port = opts.port ?? freePort();
  const prefix = opts.productForm ? "PRIVITTY_" : "EDGE_";
  const env: Record<string, string> = {
    DENO: Deno.execPath(),
    [`${prefix}SERVER`]: opts.relay.httpOrigin,
    [`${prefix}LOG_LEVEL`]: "debug",
    // The direct path (docs/p2p.md) stays off unless a test turns it on: relay tests stay relay.
    EDGE_P2P_LISTEN: "off",
    NO_COLOR: "1",
    ...opts.relay.tlsEnv(),
    ...opts.env,
  };
  if (opts.profile !== null) env[`${prefix}PROFILE`] = opts.profile ?? "Test gateway";
  const where = opts.productForm
    ? ["--accounts", opts.dataDir, "--listen", `127.0.0.1:${port}`]
    : ["--data-dir", opts.dataDir, "--port", String(port), "--host", "127.0.0.1"];
  const daemonArgs = [...where, ...(opts.args ?? [])];
  let command = opts.viaTask
    ? [Deno.execPath(), "task", "start", ...daemonArgs]
    : ["bash", `${ROOT}scripts/start.sh`, ...daemonArgs];
  if (opts.fileLimit !== undefined) {
    command = ["bash", "-c", `ulimit -n ${opts.fileLimit} && exec "$@"`, "bash", ...command];
  }
  if (opts.ownProcessGroup) command = ["setsid", ...command];
  if (opts.machineIdFile !== undefined) {
    // A private mount namespace with another machine id; unshare and bash exec into the rest.
    command = [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "bash",
      "-c",
      'mount --bind "$0" /etc/machine-id && exec "$@"',
      opts.machineIdFile,
      ...command,
    ];
  }
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: ROOT,
    env,
    clearEnv: false,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk;
  };
  const drained = Promise.all([collect(child.stdout), collect(child.stderr)]);
  const exited = child.status.then(async (s) => {
    await drained;
    return s.code;
  });
  let done = false;
  exited.then(() => done = true);
  const url = `http://127.0.0.1:${port}`;

  const stop = async (signal: Deno.Signal = "SIGTERM") => {
    if (!done) {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 15_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return await exited;
  };

  return {
    pid: child.pid,
    port,
    url,
    exited,
    output: () => text,
    async waitHealthy(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (done) throw new Error(`daemon exited early (code ${await exited}):\n${text}`);
        try {
          const res = await fetch(`${url}/health`);
          await res.body?.cancel();
          if (res.status === 200) return;
        } catch { /* not listening yet */ }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`daemon not healthy after ${timeoutMs} ms:\n${text}`);
    },
    async rpc(method, params = []) {
      const res = await fetch(`${url}/rpc`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
      });
      if (res.status === 204) return null;
      return await res.json();
    },
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop("SIGKILL");
    },
  };
}
