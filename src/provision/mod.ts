/**
 * First-start provisioning in SPEC §1 order, each step logged with its duration and idempotent:
 * a restart with everything stored does no network work and finishes in milliseconds.
 */
import type { GatewayConfig } from "../config.ts";
import { generateAccountKey } from "../crypto/keygen.ts";
import { StartupError } from "../errors.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { ConfigKey, Store } from "../store/mod.ts";
import { verifyImapLogin } from "../transport/imap_client.ts";
import type { Endpoint, ServerParams } from "../transport/server_params.ts";
import { verifySmtpLogin } from "../transport/smtp_client.ts";
import { type AccountPaths, prepareAccountsDir } from "./accounts_dir.ts";
import { discoverServers } from "./autodiscover.ts";
import { DataDirLock, prepareDataDir } from "./data_dir.ts";
import { registerOnRelay } from "./relay_register.ts";

const log = logger("provision");

/** Seams for tests; defaults are the real network operations. */
export interface ProvisionDeps {
  readonly events?: EventSink;
  readonly fetch: typeof fetch;
  readonly verifyImap: (e: Endpoint, password: string) => Promise<void>;
  readonly verifySmtp: (e: Endpoint, password: string) => Promise<void>;
  readonly probeTimeoutMs: number;
}

/** The provisioned account, ready for the daemon to serve. */
export interface ProvisionResult {
  readonly store: Store;
  readonly lock: DataDirLock;
  readonly paths: AccountPaths;
  readonly addr: string;
  readonly password: string;
  readonly serverParams: ServerParams;
  readonly fingerprint: string;
  /** True when this start registered a new account. */
  readonly firstBoot: boolean;
  /** Duration of each step in ms. */
  readonly timings: Readonly<Record<string, number>>;
}

async function step<T>(
  timings: Record<string, number>,
  n: number,
  name: string,
  fn: () => T | Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  const ms = Math.round((performance.now() - t0) * 10) / 10;
  timings[name] = ms;
  log.info(`step ${n}/7 ${name} done`, { ms });
  return out;
}

/** Runs steps 1–6; the caller starts the HTTP server (step 7). Releases the lock on failure. */
export async function provision(
  config: GatewayConfig,
  partial: Partial<ProvisionDeps> = {},
): Promise<ProvisionResult> {
  const deps: ProvisionDeps = {
    fetch,
    verifyImap: verifyImapLogin,
    verifySmtp: verifySmtpLogin,
    probeTimeoutMs: 5_000,
    ...partial,
  };
  const timings: Record<string, number> = {};
  const lock = await step(timings, 1, "data directory", () => {
    prepareDataDir(config.dataDir);
    return DataDirLock.acquire(config.dataDir);
  });
  let store: Store | undefined;
  try {
    const paths = await step(
      timings,
      2,
      "accounts directory",
      () => prepareAccountsDir(config.dataDir),
    );
    store = Store.open(paths.databasePath);
    Deno.chmodSync(paths.databasePath, 0o600);
    const db = store;
    await step(timings, 3, "license", () => licenseStep(config));
    const registered = db.config.get(ConfigKey.ADDR) === undefined;
    const { addr, password } = await step(
      timings,
      4,
      "relay registration",
      () => registerStep(config, db, deps),
    );
    const serverParams = await step(
      timings,
      5,
      "mail autodiscovery",
      () => discoverStep(config, db, deps, addr, password),
    );
    const fingerprint = await step(timings, 6, "encryption keys", () => keyStep(db, addr));
    return {
      store: db,
      lock,
      paths,
      addr,
      password,
      serverParams,
      fingerprint,
      firstBoot: registered,
      timings,
    };
  } catch (err) {
    store?.close();
    lock.release();
    throw err;
  }
}

function licenseStep(config: GatewayConfig): void {
  if (config.licenseUrl === undefined) log.info("no EDGE_LICENSE_URL; license activation skipped");
  else log.warn("license activation is not available in this build; EDGE_LICENSE_URL ignored");
}

async function registerStep(config: GatewayConfig, store: Store, deps: ProvisionDeps) {
  const addr = store.config.get(ConfigKey.ADDR);
  const password = store.config.get(ConfigKey.MAIL_PASSWORD);
  if (addr !== undefined && password !== undefined) {
    if (
      config.profile !== undefined && config.profile !== store.config.get(ConfigKey.DISPLAY_NAME)
    ) {
      store.config.set(ConfigKey.DISPLAY_NAME, config.profile);
      log.info("display name updated from EDGE_PROFILE");
    }
    log.info("already registered; skipping", { addr });
    return { addr, password };
  }
  if (config.profile === undefined) {
    throw new StartupError(
      'EDGE_PROFILE is required on first start: set it to the gateway\'s display name (e.g. EDGE_PROFILE="Gateway 1")',
    );
  }
  log.info("registering with the relay", { url: config.relay.registerUrl });
  const account = await registerOnRelay(config.relay.registerUrl, deps.fetch);
  store.db.tx(() => {
    store.config.set(ConfigKey.ADDR, account.email);
    store.config.set(ConfigKey.MAIL_PASSWORD, account.password);
    store.config.set(ConfigKey.DISPLAY_NAME, config.profile!);
  });
  log.info("relay assigned the address", { addr: account.email });
  return { addr: account.email, password: account.password };
}

async function discoverStep(
  config: GatewayConfig,
  store: Store,
  deps: ProvisionDeps,
  addr: string,
  password: string,
) {
  const stored = store.config.getJson<ServerParams>(ConfigKey.SERVER_PARAMS);
  if (stored !== undefined) {
    log.info("mail servers already configured; skipping");
    return stored;
  }
  const params = await discoverServers(addr, password, config.relay, {
    fetch: deps.fetch,
    verifyImap: deps.verifyImap,
    verifySmtp: deps.verifySmtp,
    probeTimeoutMs: deps.probeTimeoutMs,
    allowPlaintext: config.allowPlaintextMail,
    events: deps.events,
  });
  store.db.tx(() => {
    store.config.setJson(ConfigKey.SERVER_PARAMS, params);
    store.config.set(ConfigKey.CONFIGURED_AT, String(Math.floor(Date.now() / 1000)));
  });
  return params;
}

async function keyStep(store: Store, addr: string): Promise<string> {
  const existing = store.keys.current();
  if (existing !== undefined) {
    log.info("key already present; skipping", { fingerprint: existing.fingerprint });
    return existing.fingerprint;
  }
  const key = await generateAccountKey(addr);
  store.keys.add(key);
  log.info("generated the account key", { fingerprint: key.fingerprint });
  return key.fingerprint;
}
