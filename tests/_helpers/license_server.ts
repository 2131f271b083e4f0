/**
 * Runs the project's license server as a subprocess (`scripts/license_server.sh`, as
 * `deno task license-server` does): its CLI commands, and `serve` stopped by PID.
 */
import { freePort } from "./ports.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Output of one license-server command. */
export interface CommandOutput {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `license-server <args…>`. */
export async function licenseServerCommand(...args: string[]): Promise<CommandOutput> {
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}scripts/license_server.sh`, ...args],
    env: { DENO: Deno.execPath(), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A running `license-server serve`. */
export interface LicenseServerProcess extends AsyncDisposable {
  readonly pid: number;
  readonly port: number;
  readonly origin: string;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number>;
}

/** Starts `serve` on `port` (default a free one) and waits until `/health` answers. */
export async function startLicenseServer(
  dataDir: string,
  port = freePort(),
): Promise<LicenseServerProcess> {
  const child = new Deno.Command("bash", {
    args: [
      `${ROOT}scripts/license_server.sh`,
      "serve",
      "--data-dir",
      dataDir,
      "--port",
      String(port),
    ],
    env: { DENO: Deno.execPath(), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const c of s.pipeThrough(new TextDecoderStream())) text += c;
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const exited = child.status.then(async (s) => (await drained, s.code));
  let done = false;
  exited.then(() => done = true);
  const origin = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!done) {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
    }
    return await exited;
  };
  const deadline = Date.now() + 20_000;
  while (true) {
    if (done) throw new Error(`license server exited early (${await exited}):\n${text}`);
    try {
      const res = await fetch(`${origin}/health`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not yet */ }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`license server not up after 20 s:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid,
    port,
    origin,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}
