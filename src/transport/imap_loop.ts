/**
 * Keeps one IMAP connection to INBOX alive with IDLE: reports connectivity (2000 connecting,
 * 4000 connected, 1000 after a drop), reconnects with jittered exponential back-off, sends a
 * NOOP heartbeat to notice half-open connections, and tells a callback when new mail exists.
 */
import { Connectivity } from "../constants.ts";
import type { ConnectivityMonitor } from "../core/connectivity.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { createImapClient } from "./imap_client.ts";
import { type DeliverMail, drainInbox } from "./inbox_drain.ts";
import { describeEndpoint, type ServerParams } from "./server_params.ts";

const log = logger("imap");

/** Options of {@link ImapLoop}. */
export interface ImapLoopOptions {
  readonly params: ServerParams;
  readonly password: string;
  readonly connectivity: ConnectivityMonitor;
  readonly events: EventSink;
  /** Called with the mailbox's message count when mail arrives (and once after connecting). */
  readonly onNewMail?: (exists: number) => void;
  /** When set, every message is handed to it and deleted once it resolved (see inbox_drain.ts). */
  readonly deliver?: DeliverMail;
  /** NOOP interval while idle (default 15 s). */
  readonly heartbeatMs?: number;
  /** Back-off bounds in ms (default 500 … 30 000). */
  readonly backoff?: { readonly min: number; readonly max: number };
}

type Client = ReturnType<typeof createImapClient>;

/** Resolves after `ms` or when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The reconnecting IMAP IDLE loop. */
export class ImapLoop {
  readonly #opts: ImapLoopOptions;
  #client: Client | undefined;
  #running: Promise<void> | undefined;
  #abort = new AbortController();

  constructor(opts: ImapLoopOptions) {
    this.#opts = opts;
  }

  /** Starts the loop in the background; it ends when `signal` aborts or `stop()` is called. */
  start(signal: AbortSignal): void {
    signal.addEventListener("abort", () => this.#abort.abort(), { once: true });
    this.#running ??= this.#run().catch((err) =>
      log.error("IMAP loop ended unexpectedly", { error: String(err) })
    );
  }

  /** Stops the loop and closes the connection. */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#client?.close();
    await this.#running;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    const { min, max } = this.#opts.backoff ?? { min: 500, max: 30_000 };
    let failures = 0;
    while (!signal.aborted) {
      const connected = await this.#session(signal);
      if (signal.aborted) break;
      failures = connected ? 0 : failures + 1;
      this.#opts.connectivity.set(Connectivity.NOT_CONNECTED);
      const base = Math.min(max, min * 2 ** Math.min(failures, 16));
      const delay = Math.round(base * (0.8 + Math.random() * 0.4));
      log.info("reconnecting", { in_ms: delay });
      await sleep(delay, signal);
    }
    this.#opts.connectivity.set(Connectivity.NOT_CONNECTED);
  }

  /** One connection's life; resolves true if it got connected before it ended. */
  async #session(signal: AbortSignal): Promise<boolean> {
    const { params, password, connectivity } = this.#opts;
    connectivity.set(Connectivity.CONNECTING);
    const client = createImapClient(params.imap, password);
    this.#client = client;
    let closed = false;
    const closedP = new Promise<void>((resolve) =>
      client.on("close", () => {
        closed = true;
        resolve();
      })
    );
    client.on("error", (err: Error) => log.warn("IMAP connection error", { error: err.message }));
    const drain = this.#drainer(client);
    client.on("exists", (d: { count: number }) => {
      this.#opts.onNewMail?.(d.count);
      drain();
    });
    let wasConnected = false;
    try {
      await client.connect();
      const box = await client.mailboxOpen("INBOX");
      wasConnected = true;
      connectivity.set(Connectivity.CONNECTED);
      this.#opts.events.publish({
        kind: "ImapConnected",
        msg: `IMAP connected to ${describeEndpoint(params.imap)}`,
      });
      log.info("connected", { server: describeEndpoint(params.imap) });
      this.#opts.onNewMail?.(box.exists);
      drain();
      await this.#idleLoop(client, signal, closedP, () => closed);
    } catch (err) {
      if (!signal.aborted) {
        log.warn("IMAP session failed", {
          server: describeEndpoint(params.imap),
          error: err instanceof Error ? err.message : String(err),
        });
      }
    } finally {
      client.close();
      this.#client = undefined;
    }
    return wasConnected;
  }

  /** A trigger that runs inbox passes one at a time, with one more pass if mail came meanwhile. */
  #drainer(client: Client): () => void {
    const deliver = this.#opts.deliver;
    if (!deliver) return () => {};
    const skip = new Set<number>();
    let running = false;
    let again = false;
    const run = async () => {
      running = true;
      try {
        do {
          again = false;
          while (await drainInbox(client, deliver, skip) > 0) { /* until a pass finds nothing */ }
        } while (again);
      } catch (err) {
        log.warn("inbox pass failed", { error: err instanceof Error ? err.message : String(err) });
      } finally {
        running = false;
      }
    };
    return () => {
      if (running) again = true;
      else void run();
    };
  }

  async #idleLoop(
    client: Client,
    signal: AbortSignal,
    closedP: Promise<void>,
    isClosed: () => boolean,
  ) {
    const heartbeat = this.#opts.heartbeatMs ?? 15_000;
    const aborted = new Promise<void>((r) =>
      signal.addEventListener("abort", () => r(), { once: true })
    );
    while (!signal.aborted && !isClosed()) {
      const idle = client.idle().catch(() => undefined);
      await Promise.race([idle, sleep(heartbeat, signal), closedP, aborted]);
      if (signal.aborted || isClosed()) return;
      const noop = client.noop();
      const timeout = sleep(10_000, signal).then(() => "timeout" as const);
      if (
        await Promise.race([
          noop.then(() => "ok" as const),
          timeout,
          closedP.then(() => "closed" as const),
        ]) !== "ok"
      ) {
        log.warn("IMAP heartbeat failed; dropping the connection");
        return;
      }
    }
  }
}
