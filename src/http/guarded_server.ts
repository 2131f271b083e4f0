/**
 * The daemon's HTTP server: its own accept loop in front of Deno's HTTP server, so that a
 * hostile client cannot hold connections forever or stop the daemon by exhausting descriptors.
 * Connections are capped, cut when they break a deadline (`ServerLimits`, checked by a periodic
 * sweep of `ConnectionTracker`), and a failing accept is logged and retried with back-off.
 */
import { describeError } from "../errors.ts";
import { logger } from "../log.ts";
import { ConnectionTracker } from "./connection_tracker.ts";
import {
  type ConnectionHandler,
  serveConnection,
  type ServedConnection,
} from "./serve_connection.ts";
import type { ServerLimits } from "./server_limits.ts";

const log = logger("http");

/** What `serveGuarded` needs. */
export interface GuardedServerOptions {
  readonly hostname: string;
  readonly port: number;
  readonly limits: ServerLimits;
  readonly handler: ConnectionHandler;
  /** The clock deadlines are measured with (ms; tests inject one). */
  readonly now?: () => number;
  /** How often deadlines are checked (ms); default a quarter of the shortest timeout, ≤ 1 s. */
  readonly sweepEveryMs?: number;
  /** Back-off after a failed accept: first delay and largest delay (ms). */
  readonly acceptBackoffMs?: { readonly first: number; readonly max: number };
  /** How long `shutdown()` lets responses in progress finish before cutting them (ms). */
  readonly shutdownGraceMs?: number;
  /** Called once per served connection when it has ended (the daemon's `BurstGc` counts them). */
  readonly onConnectionClosed?: () => void;
  /** Accepts the next connection (tests inject failures); default the listener's `accept()`. */
  readonly accept?: (listener: Deno.TcpListener) => Promise<Deno.TcpConn>;
}

/** Counters for tests and logs. */
export interface GuardedServerStats {
  /** Connections open now. */
  readonly open: number;
  /** Connections accepted and closed at once because `maxConnections` were open. */
  readonly refused: number;
  /** Accepts that failed (e.g. no file descriptor left). */
  readonly acceptFailures: number;
  /** Connections cut for breaking a deadline, by rule. */
  readonly cuts: Readonly<Record<string, number>>;
}

/** A running server. */
export interface GuardedServer {
  readonly addr: Deno.NetAddr;
  stats(): GuardedServerStats;
  /** Checks every connection's deadline now (the sweep timer calls it too). */
  sweep(): number;
  /** Stops accepting, lets requests in progress finish (within the grace period), closes all. */
  shutdown(): Promise<void>;
}

/** Logs the start and the end of a run of like events, not each one. */
class Streak {
  count = 0;
  constructor(
    private readonly onStart: (err?: unknown) => void,
    private readonly onEnd: (n: number) => void,
  ) {}
  hit(err?: unknown): void {
    if (this.count++ === 0) this.onStart(err);
  }
  end(): void {
    if (this.count === 0) return;
    this.onEnd(this.count);
    this.count = 0;
  }
}

const INTERNAL_ERROR = { error: "internal error" } as const;

function onHandlerError(err: unknown): Response {
  log.error("request failed", { error: describeError(err) });
  return Response.json(INTERNAL_ERROR, { status: 500 });
}

/** A listener's accept errors that mean it was closed (the loop ends). */
function isClosed(err: unknown): boolean {
  return err instanceof Deno.errors.BadResource || err instanceof Deno.errors.Interrupted;
}

/**
 * Binds `hostname:port` (synchronously: a bind error is thrown here) and serves `handler` on
 * every accepted connection under `limits`.
 */
export function serveGuarded(options: GuardedServerOptions): GuardedServer {
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const limits = options.limits;
  const tracker = new ConnectionTracker(limits, options.now);
  const accept = options.accept ?? ((l: Deno.TcpListener) => l.accept());
  const backoff = options.acceptBackoffMs ?? { first: 10, max: 1_000 };
  const served = new Set<ServedConnection>();
  let closing = false;
  let refused = 0;
  let acceptFailures = 0;
  let wakeBackoff: (() => void) | undefined;

  const refusals = new Streak(
    () =>
      log.warn("connection limit reached; refusing new connections", {
        max_connections: limits.maxConnections,
      }),
    (n) => log.info("accepting connections again", { refused: n }),
  );
  const failures = new Streak(
    (err) => log.warn("accept failed; retrying with back-off", { error: describeError(err) }),
    (n) => log.info("accept works again", { failed_accepts: n }),
  );

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeBackoff = undefined;
        resolve();
      }
      wakeBackoff = done;
    });

  const serve = (conn: Deno.TcpConn) => {
    const box: { connection?: ServedConnection } = {}; // set once it is served
    const tracked = tracker.open(() => box.connection?.cut());
    if (tracked === undefined) {
      refused++;
      refusals.hit();
      conn.close();
      return;
    }
    refusals.end();
    try {
      conn.setKeepAlive(true); // a client that vanished without closing frees its slot
    } catch { /* the socket is gone already */ }
    const done = () => tracked.responseDone();
    const ready = (res: Response) => {
      tracked.responseReady();
      return res;
    };
    const failed = (err: unknown): never => {
      tracked.responseReady();
      throw err;
    };
    const handler: ConnectionHandler = (req, info) => {
      tracked.requestStarted();
      info.completed.then(done, done);
      let res: Response | Promise<Response>;
      try {
        res = options.handler(req, info);
      } catch (err) {
        return failed(err);
      }
      if (res instanceof Promise) {
        tracked.handling(res);
        return res.then(ready, failed);
      }
      tracked.responseReady();
      return res;
    };
    const connection = serveConnection(conn, handler, onHandlerError);
    box.connection = connection;
    served.add(connection);
    connection.finished
      .catch((err) => log.debug("connection ended with an error", { error: describeError(err) }))
      .finally(() => {
        tracked.closed();
        served.delete(connection);
        options.onConnectionClosed?.();
      });
  };

  const acceptLoop = (async () => {
    let delay = backoff.first;
    while (!closing) {
      let conn: Deno.TcpConn;
      try {
        conn = await accept(listener);
      } catch (err) {
        if (closing || isClosed(err)) break;
        acceptFailures++;
        failures.hit(err);
        await sleep(delay);
        delay = Math.min(delay * 2, backoff.max);
        continue;
      }
      failures.end();
      delay = backoff.first;
      if (closing) {
        conn.close();
        break;
      }
      serve(conn);
    }
  })();

  const shortest = Math.min(
    limits.headersTimeoutMs,
    limits.keepAliveTimeoutMs,
    limits.requestTimeoutMs,
  );
  const sweepEvery = options.sweepEveryMs ?? Math.max(10, Math.min(1_000, shortest / 4));
  const sweepTimer = setInterval(() => tracker.sweep(), sweepEvery);

  let stopped: Promise<void> | undefined;
  return {
    addr: listener.addr,
    stats: () => ({
      open: tracker.size,
      refused,
      acceptFailures,
      cuts: { ...tracker.cuts },
    }),
    sweep: () => tracker.sweep(),
    shutdown: () =>
      stopped ??= (async () => {
        closing = true;
        clearInterval(sweepTimer);
        try {
          listener.close();
        } catch { /* closed already */ }
        wakeBackoff?.();
        await acceptLoop;
        tracker.drain();
        const grace = setTimeout(() => tracker.cutAll(), options.shutdownGraceMs ?? 5_000);
        try {
          await Promise.all([...served].map((c) => c.finished.catch(() => {})));
        } finally {
          clearTimeout(grace);
        }
      })(),
  };
}
