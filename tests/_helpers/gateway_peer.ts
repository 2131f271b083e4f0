/**
 * A gateway as a test peer: the real daemon (scripts/start.sh, production permissions) on a
 * test relay, with its SSE stream collected from the start, `call()` for JSON-RPC results and
 * `waitForEvent()`: the same shape as DeltaChatPeer, so two-peer tests read alike.
 */
import { type DaemonProcess, spawnDaemon } from "./daemon.ts";
import type { Relay } from "./relay.ts";
import { makeTempDir, type TempDir } from "./temp.ts";
import { poll } from "./poll.ts";
import { SseParser } from "../../src/cli/sse_client.ts";
import type { WireEvent, WireEventType } from "../../src/events/types.ts";

/** Every member name of any wire event. */
type WireMember = WireEvent extends infer E ? E extends unknown ? keyof E : never : never;

/**
 * A wire event as tests read it: `type`, and any member a wire event can have (unknown until
 * the test checks it). Misspelt or camelCase names (`kind`, `chatId`) do not compile.
 */
export type ReceivedEvent =
  & { readonly type: WireEventType }
  & { readonly [K in Exclude<WireMember, "type">]?: unknown };

/** One event as received on /events. */
export interface GatewayEvent {
  readonly t: number;
  readonly id: number;
  readonly event: ReceivedEvent;
}

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** A running gateway daemon with its event log. */
export class GatewayPeer implements AsyncDisposable {
  readonly events: GatewayEvent[] = [];
  #sse = new AbortController();
  #waiters: (() => void)[] = [];

  private constructor(
    readonly name: string,
    readonly daemon: DaemonProcess,
    readonly dir: TempDir,
    readonly addr: string,
  ) {}

  /**
   * Provisions a gateway named `name` on `relay` (data dir in a temp dir unless given; `args`
   * are extra daemon flags, e.g. `--cors`).
   */
  static async start(
    name: string,
    relay: Relay,
    opts: {
      dataDir?: string | undefined;
      env?: Record<string, string> | undefined;
      args?: readonly string[] | undefined;
      /** Another machine: bind-mounted over /etc/machine-id for this daemon (spawnDaemon). */
      machineIdFile?: string | undefined;
    } = {},
  ): Promise<GatewayPeer> {
    const dir = await makeTempDir(`gw-${name}`);
    const daemon = spawnDaemon({
      relay,
      dataDir: opts.dataDir ?? `${dir.path}/data`,
      profile: name,
      env: opts.env,
      args: opts.args,
      ...(opts.machineIdFile === undefined ? {} : { machineIdFile: opts.machineIdFile }),
    });
    try {
      await daemon.waitHealthy();
      const addr = (await daemon.rpc("get_config", [1, "addr"]))?.result as string;
      const peer = new GatewayPeer(name, daemon, dir, addr);
      await peer.#subscribe();
      return peer;
    } catch (err) {
      await daemon.stop("SIGKILL");
      await dir[Symbol.asyncDispose]();
      throw err;
    }
  }

  async #subscribe(): Promise<void> {
    const res = await fetch(`${this.daemon.url}/events`, { signal: this.#sse.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser(); // the CLI's own parser
    (async () => {
      try {
        while (true) {
          const { value, done } = await reader.read();
          if (done) return;
          for (const m of parser.feed(value)) {
            if (m.data === "") continue;
            this.events.push({
              t: performance.now(),
              id: Number(m.id ?? 0),
              event: JSON.parse(m.data),
            });
          }
          for (const w of this.#waiters.splice(0)) w();
        }
      } catch { /* aborted */ }
    })();
  }

  /** The result of a JSON-RPC call; throws RpcError for an error answer (null for HTTP 204). */
  async call<T = unknown>(method: string, ...params: unknown[]): Promise<T> {
    const body = await this.daemon.rpc(method, params);
    if (body === null) return null as T;
    if ("error" in body) {
      const e = body.error as { code: number; message: string };
      throw new RpcError(e.code, `${method}: ${e.message}`);
    }
    return body.result as T;
  }

  /** The first event from index `from` on that matches, waiting up to `timeoutMs`. */
  async waitForEvent(
    pred: (e: GatewayEvent) => boolean,
    timeoutMs = 30_000,
    from = 0,
  ): Promise<GatewayEvent> {
    const deadline = Date.now() + timeoutMs;
    for (let i = from;;) {
      for (; i < this.events.length; i++) if (pred(this.events[i])) return this.events[i];
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `${this.name}: no matching event within ${timeoutMs} ms; last events: ${
            JSON.stringify(this.events.slice(-8).map((e) => e.event))
          }\n--- daemon output (tail) ---\n${this.daemon.output().slice(-6000)}`,
        );
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 500));
        this.#waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Polls `fn` until `ok` holds (or `timeoutMs` passes) and returns the last value. */
  poll<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
    return poll(fn, ok, timeoutMs);
  }

  /** Stops the daemon (SIGTERM, so it shuts down cleanly) and removes its temp dir. */
  async stop(): Promise<void> {
    this.#sse.abort();
    await this.daemon.stop();
    await this.dir[Symbol.asyncDispose]();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
