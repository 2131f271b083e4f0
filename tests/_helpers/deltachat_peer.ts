/**
 * Drives the real Delta Chat core (`deltachat-rpc-server` from npm, installed into .tools/ by
 * scripts/install-deltachat.sh) as a test peer: newline-delimited JSON-RPC over stdio, a
 * background `get_next_event_batch` loop recording every event, waiters, and a stop by PID.
 */
import type { Relay } from "./relay.ts";
import { makeTempDir, type TempDir } from "./temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Path of the core binary (env DELTA_CHAT_RPC_SERVER overrides). */
export function deltaChatBinary(): string {
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  return Deno.env.get("DELTA_CHAT_RPC_SERVER") ??
    `${ROOT}.tools/deltachat/node_modules/@deltachat/stdio-rpc-server-linux-${arch}/deltachat-rpc-server`;
}

/** True when the core is installed (the test runner installs it). */
export function deltaChatInstalled(): boolean {
  try {
    return Deno.statSync(deltaChatBinary()).isFile;
  } catch {
    return false;
  }
}

/** One recorded event: monotonic ms and the core's event object (`{kind, ...}`). */
export interface PeerEvent {
  readonly t: number;
  readonly event: { kind: string; [k: string]: unknown };
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  method: string;
}

/** A Delta Chat core process with one configured account. */
export class DeltaChatPeer implements AsyncDisposable {
  readonly events: PeerEvent[] = [];
  accountId = 0;
  addr = "";
  #next = 1;
  #pending = new Map<number, Pending>();
  #waiters: { pred: (e: PeerEvent) => boolean; resolve(e: PeerEvent): void }[] = [];
  #closed = false;
  #stderr = "";
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;

  private constructor(
    readonly name: string,
    readonly child: Deno.ChildProcess,
    readonly dir: TempDir,
  ) {
    this.#writer = child.stdin.getWriter();
    this.#readLines();
    (async () => {
      for await (const c of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.#stderr = (this.#stderr + c).slice(-20_000);
      }
    })();
    child.status.then(() => {
      this.#closed = true;
      for (const p of this.#pending.values()) {
        p.reject(new Error(`${name}: core exited during ${p.method}`));
      }
      this.#pending.clear();
    });
  }

  /** Starts a core, creates an account on `relay` and configures it (implicit TLS, test CA). */
  static async start(
    name: string,
    relay: Relay,
    opts: { displayName?: string } = {},
  ): Promise<DeltaChatPeer> {
    const dir = await makeTempDir(`dc-${name}`);
    const child = new Deno.Command(deltaChatBinary(), {
      env: { DC_ACCOUNTS_PATH: `${dir.path}/accounts`, RUST_LOG: "warn" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const peer = new DeltaChatPeer(name, child, dir);
    try {
      peer.#eventLoop();
      peer.accountId = await peer.call<number>("add_account");
      const acc = await relay.register();
      peer.addr = acc.email;
      await peer.call("set_config", peer.accountId, "displayname", opts.displayName ?? name);
      await peer.call("add_or_update_transport", peer.accountId, {
        addr: acc.email,
        password: acc.password,
        imapServer: relay.host,
        imapPort: relay.imapsPort,
        imapSecurity: "ssl",
        imapUser: null,
        imapFolder: null,
        smtpServer: relay.host,
        smtpPort: relay.smtpsPort,
        smtpSecurity: "ssl",
        smtpUser: null,
        smtpPassword: null,
        certificateChecks: "acceptInvalidCertificates",
      });
      await peer.waitForEvent((e) => e.event.kind === "ImapInboxIdle", 30_000);
      return peer;
    } catch (err) {
      await peer.stop();
      throw err;
    }
  }

  async #readLines(): Promise<void> {
    let buf = "";
    for await (const chunk of this.child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg: { id?: number; result?: unknown; error?: { code: number; message: string } };
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        const p = msg.id === undefined ? undefined : this.#pending.get(msg.id);
        if (!p) continue;
        this.#pending.delete(msg.id!);
        if (msg.error) {
          p.reject(
            Object.assign(new Error(`${this.name}: ${p.method}: ${msg.error.message}`), {
              rpc: msg.error,
            }),
          );
        } else p.resolve(msg.result);
      }
    }
  }

  async #eventLoop(): Promise<void> {
    while (!this.#closed) {
      let batch: { event: PeerEvent["event"] }[];
      try {
        batch = await this.call("get_next_event_batch");
      } catch {
        return;
      }
      const t = performance.now();
      for (const { event } of batch) {
        const rec = { t, event };
        this.events.push(rec);
        this.#waiters = this.#waiters.filter((w) => !(w.pred(rec) && (w.resolve(rec), true)));
      }
    }
  }

  /** Calls a core method with positional params. */
  call<T = unknown>(method: string, ...params: unknown[]): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`${this.name}: core is not running`));
    const id = this.#next++;
    const line = JSON.stringify({ jsonrpc: "2.0", method, params, id }) + "\n";
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method });
      this.#writer.write(new TextEncoder().encode(line)).catch(reject);
    });
  }

  /** Resolves with the first recorded (from index `from`) or future event matching `pred`. */
  waitForEvent(pred: (e: PeerEvent) => boolean, timeoutMs = 30_000, from = 0): Promise<PeerEvent> {
    const seen = this.events.slice(from).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve: (e: PeerEvent) => (clearTimeout(timer), resolve(e)) };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((x) => x !== w);
        reject(
          new Error(
            `${this.name}: no matching event within ${timeoutMs} ms; warnings:\n${
              this.warnings().join("\n")
            }`,
          ),
        );
      }, timeoutMs);
      this.#waiters.push(w);
    });
  }

  /** The core's Warning and Error events: how interop problems show (it never fails loudly). */
  warnings(): string[] {
    return this.events.filter((e) => e.event.kind === "Warning" || e.event.kind === "Error")
      .map((e) => `${e.event.kind}: ${e.event.msg}`);
  }

  /** Stops the core (stdin closed, then SIGKILL after 5 s, by PID) and removes its directory. */
  async stop(): Promise<void> {
    if (!this.#closed) {
      await this.#writer.close().catch(() => {});
      const timer = setTimeout(() => {
        try {
          this.child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5_000);
      await this.child.status;
      clearTimeout(timer);
    }
    await this.dir.cleanup();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
