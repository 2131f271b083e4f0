/**
 * Starts a provisioned daemon: composes services, starts the mail loop and the HTTP server, and
 * returns a handle whose `stop()` shuts down in order (loops, server, store, lock).
 */
import { restoreAtStart } from "./backup/start.ts";
import type { GatewayConfig } from "./config.ts";
import { describeError, diskFullError, StartupError } from "./errors.ts";
import { Connectivity } from "./constants.ts";
import { ConnectivityMonitor } from "./core/connectivity.ts";
import { EventBus } from "./events/bus.ts";
import { EventJournal } from "./events/journal.ts";
import type { GatewayEvent } from "./events/types.ts";
import { loadApiTokens } from "./http/access.ts";
import { createApp } from "./http/app.ts";
import { BURST_GC, BurstGc } from "./memory/burst_gc.ts";
import { type GuardedServer, serveGuarded } from "./http/guarded_server.ts";
import { DEFAULT_SERVER_LIMITS } from "./http/server_limits.ts";
import { serviceHealth } from "./http/health_route.ts";
import { retryActivation } from "./license/start.ts";
import { logger } from "./log.ts";
import { createMailRuntime } from "./mail_runtime.ts";
import { provision } from "./provision/mod.ts";
import { watchDiskSpace } from "./store/mod.ts";
import { buildMethodTable } from "./rpc/methods/mod.ts";
import type { Services } from "./services.ts";
import { monotonicNow } from "./transport/clock.ts";
import { P2pEndpoint } from "./transport/p2p/mod.ts";
import { ImapLoop } from "./transport/imap_loop.ts";
import { ViewerSessions } from "./viewer/session.ts";
import { protectedFileSource } from "./protected_files/viewer_source.ts";

const log = logger("daemon");

/** A running daemon. */
export interface RunningDaemon {
  /** The bound HTTP address. */
  readonly addr: Deno.NetAddr;
  /** Stops loops, then the server, then closes the store and releases the lock. */
  stop(): Promise<void>;
  /** The shutdown steps not finished yet (all of them before `stop()`). */
  unfinished(): readonly string[];
}

/**
 * Checks that the listen address can be bound (docs/contract.md §1.2, step 7's precondition), then
 * provisions (steps 1–6), then starts the HTTP server (step 7) and the mail loop. A taken port
 * fails here, before the data directory or the relay is touched.
 */
export async function startDaemon(config: GatewayConfig): Promise<RunningDaemon> {
  const bootStart = performance.now();
  checkListenAddress(config);
  const tokens = await loadApiTokens(config);
  await restoreAtStart(config); // before provisioning: a restored account is provisioned already
  const early: GatewayEvent[] = []; // provisioning's events wait for the store's id sequence
  const account = await provision(config, { events: { publish: (e) => early.push(e) } });
  const bus = new EventBus({
    journal: new EventJournal(account.store.events, {
      // A full disk is said once, by the store's disk state; the journal retries with each batch.
      onError: (err) => {
        if (diskFullError(err) === undefined) {
          log.warn(`cannot write the event journal: ${describeError(err)}`);
        }
      },
    }),
  });
  for (const event of early) bus.publish(event);
  const connectivity = new ConnectivityMonitor(bus, Connectivity.NOT_CONNECTED);
  // One memory-reducing collection after each burst of large requests or large mails.
  const burstGc = new BurstGc(BURST_GC);
  const p2p = await openDirectPath(config);
  const mail = await createMailRuntime({
    store: account.store,
    events: bus,
    dataDir: config.dataDir,
    serverParams: account.serverParams,
    password: account.password,
    secretKeys: account.installation.keys,
    noteGarbage: (bytes) => burstGc.note(bytes),
    problems: connectivity,
    license: account.license,
    p2p,
  });
  const services: Services = {
    config,
    store: account.store,
    events: bus,
    connectivity,
    license: account.license,
    startedAt: Date.now(),
    core: mail.core,
    quarantine: mail.reception,
  };
  const loops = new AbortController();
  const imap = new ImapLoop({
    params: account.serverParams,
    password: account.password,
    connectivity,
    events: bus,
    reception: mail.reception,
    monotonic: monotonicNow,
    problems: connectivity,
  });
  imap.start(loops.signal);
  mail.start(loops.signal);
  // A start on a full disk, or a disk that fills later: messaging resumes once space is back.
  const diskWatch = watchDiskSpace(account.store.db, loops.signal);
  const licenseRetry = account.licenseRetryUrl === undefined
    ? Promise.resolve()
    : retryActivation(account.license, account.licenseRetryUrl, loops.signal);

  const app = createApp({
    services,
    methods: buildMethodTable(),
    bus,
    viewer: {
      sessions: new ViewerSessions({ fingerprint: account.device.fingerprint, events: bus }),
      openProtectedFile: protectedFileSource(mail.core.protectedFiles, bus),
    },
    cors: config.cors,
    allowedHosts: config.allowedHosts,
    tokens,
    ssePingMs: config.ssePingMs,
    health: serviceHealth(services),
    noteGarbage: (bytes) => burstGc.note(bytes),
  });
  let server: GuardedServer;
  try {
    server = serve(config, app.serverFetch, () => burstGc.note(BURST_GC.connectionBytes));
  } catch (err) {
    loops.abort();
    p2p?.close();
    await imap.stop();
    await mail.stop();
    await licenseRetry;
    await diskWatch;
    bus.close();
    account.store.close();
    account.lock.release();
    throw err;
  }
  logAccess(config, tokens?.size);
  const ms = Math.round(performance.now() - bootStart);
  log.info(`step 7/7 HTTP server listening on ${server.addr.hostname}:${server.addr.port}`, {
    addr: account.addr,
    startup_ms: ms,
  });

  const steps: [string, () => unknown][] = [
    // First: running direct transfers end as cancelled and resume after the next start.
    ["direct path endpoint", () => p2p?.close()],
    ["IMAP loop", () => (loops.abort(), imap.stop())],
    ["outbox and receipts", () => mail.stop()],
    ["license activation retry", () => licenseRetry],
    ["disk space watch", () => diskWatch],
    ["event streams", () => bus.close()],
    ["HTTP server", () => (burstGc.cancel(), server.shutdown())],
    ["store", () => account.store.close()],
    ["data directory lock", () => account.lock.release()],
  ];
  let done = 0;
  let stopped: Promise<void> | undefined;
  return {
    addr: server.addr,
    unfinished: () => steps.slice(done).map(([name]) => name),
    stop: () =>
      stopped ??= (async () => {
        for (const [name, step] of steps) {
          try {
            await step();
          } catch (err) {
            log.error(`shutdown: stopping the ${name} failed`, { error: describeError(err) });
          }
          done++;
        }
        log.info("stopped");
      })(),
  };
}

/**
 * Opens the direct path's QUIC endpoint (docs/p2p.md) unless `--p2p-listen off`. A port that
 * cannot be bound (or a STUN server that fails) is a warning: the daemon runs without the direct
 * path, and relay parts carry every file.
 */
async function openDirectPath(config: GatewayConfig): Promise<P2pEndpoint | undefined> {
  if (config.p2pListen === null) {
    log.info("direct path off (--p2p-listen off): files above the relay limit go as relay parts");
    return undefined;
  }
  const { host, port } = config.p2pListen;
  try {
    const ep = await P2pEndpoint.open({
      hostname: host,
      port,
      ...(config.stunServer === undefined
        ? {}
        : { stun: { hostname: config.stunServer.host, port: config.stunServer.port } }),
    });
    log.info(`direct path listening on UDP ${host}:${ep.port}`, { candidates: ep.candidates });
    return ep;
  } catch (err) {
    log.warn(
      `direct path off: cannot open UDP ${host}:${port}: ${describeError(err)}; ` +
        "files above the relay limit go as relay parts",
    );
    return undefined;
  }
}

/** Binds the HTTP server (synchronously); a clear error when it cannot. */
function serve(
  config: GatewayConfig,
  handler: (
    req: Request,
    info?: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response>,
  onConnectionClosed: () => void,
): GuardedServer {
  try {
    return serveGuarded({
      hostname: config.host,
      port: config.port,
      limits: DEFAULT_SERVER_LIMITS,
      handler,
      onConnectionClosed,
      shutdownGraceMs: 3_000, // within the daemon's shutdown deadline (shutdown.ts)
    });
  } catch (err) {
    throw listenError(config, err);
  }
}

/**
 * Binds the listen address and releases it at once: a port another program holds (or an address
 * this host does not have) is a StartupError before provisioning registers an account.
 */
export function checkListenAddress(config: Pick<GatewayConfig, "host" | "port">): void {
  try {
    Deno.listen({ hostname: config.host, port: config.port, transport: "tcp" }).close();
  } catch (err) {
    throw listenError(config, err);
  }
}

/** `cannot listen on H:P: <OS error>`, with what to do when the port is taken. */
function listenError(config: Pick<GatewayConfig, "host" | "port">, err: unknown): StartupError {
  const hint = err instanceof Deno.errors.AddrInUse
    ? "; another program is listening there: stop it or choose another --port"
    : "";
  return new StartupError(
    `cannot listen on ${config.host}:${config.port}: ${describeError(err)}${hint}`,
    undefined,
    { cause: err },
  );
}

/**
 * Says at start who may call the API: tokens on or off, and the warnings an operator needs (a
 * bare `--cors` answers every origin; no tokens beyond loopback lets anyone on the network call
 * `/rpc`). Never logs a token.
 */
function logAccess(config: GatewayConfig, tokenCount: number | undefined): void {
  if (tokenCount !== undefined) {
    log.info(`API tokens on: /rpc and /events need one (${tokenCount} configured)`);
  } else if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(config.host)) {
    log.warn(
      `listening on ${config.host} without API tokens: anyone who reaches this address can call ` +
        "/rpc; set EDGE_API_TOKEN or EDGE_API_TOKENS_FILE (docs/access.md)",
    );
  }
  if (config.cors === true) {
    log.warn(
      "--cors without origins: every web page may call this gateway from a browser; " +
        "list the origins instead (--cors=https://hmi.example)",
    );
  }
  if (config.allowedHosts === "*") {
    log.warn("--allowed-hosts=*: the Host check against DNS rebinding is off");
  }
}
