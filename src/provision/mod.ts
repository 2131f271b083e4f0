/**
 * First-start provisioning in docs/contract.md §1.2 order, each step idempotent and logged with its
 * duration. A restart with everything stored does no network work and finishes in milliseconds.
 */
import type { GatewayConfig } from "../config.ts";
import { generateAccountKey, keyCreationTime } from "../crypto/keygen.ts";
import { describeError, diskFullError, StartupError } from "../errors.ts";
import type { EventSink } from "../events/types.ts";
import { type LicenseStartDeps, startLicense } from "../license/start.ts";
import type { LicenseManager } from "../license/manager.ts";
import { logger } from "../log.ts";
import { ConfigKey, setRelayMessageLimit, Store } from "../store/mod.ts";
import type { Endpoint, ServerParams } from "../transport/server_params.ts";
import { DataDirLayout } from "../constants.ts";
import { type AccountPaths, prepareAccountsDir } from "./accounts_dir.ts";
import { discoverServers } from "./autodiscover.ts";
import { errText, prepareDataDir, prepareDefaultFilesDir } from "./data_dir.ts";
import { ensureAccountKey, type KeyGenerator } from "./keys.ts";
import { DataDirLock } from "./lock.ts";
import { type LoginCheckers, networkLoginCheckers } from "./login_check.ts";
import { registerOnRelay } from "./relay_register.ts";
import { unlessDiskFull } from "./unless_disk_full.ts";
import { probeSmtpSizeLimit } from "../transport/smtp_size.ts";
import {
  type FingerprintSources,
  loadDeviceFingerprint,
  type StoredDeviceFingerprint,
  storeDeviceFingerprint,
} from "../viewer/device_fingerprint.ts";
import { loadServerParams, saveServerParams } from "./server_params.ts";
import { type Installation, openInstallation } from "./installation.ts";

const log = logger("provision");

/** Seams for tests; the defaults are the real network, clock and key generator. */
export interface ProvisionDeps extends LoginCheckers {
  /** Receives `ConfigureProgress` while the account is being configured. */
  readonly events?: EventSink;
  readonly fetch: typeof fetch;
  /** Wall clock in ms (the `configured_at` timestamp). */
  readonly clock: () => number;
  readonly generateKey: KeyGenerator;
  /** Limit of one autoconfig probe (default 5 s), one login (30 s), the registration (30 s). */
  readonly probeTimeoutMs: number;
  readonly loginTimeoutMs: number;
  readonly registerTimeoutMs: number;
  /** Seams of the license step (default: this machine's keys and fingerprint, `fetch`). */
  readonly license?: LicenseStartDeps;
  /** Where the device fingerprint's MAC and machine id come from (default: this machine). */
  readonly fingerprintSources?: FingerprintSources;
  /** The relay's message size limit from SMTP SIZE (default: transport/smtp_size.ts). */
  readonly probeSmtpSize: (
    endpoint: Endpoint,
    password: string,
    timeoutMs: number,
  ) => Promise<number | undefined>;
}

/** The provisioned account, ready for the daemon to serve. */
export interface ProvisionResult {
  /** The open account database; the caller closes it at shutdown. */
  readonly store: Store;
  /** The data directory's lock; the caller releases it at shutdown (after closing the store). */
  readonly lock: DataDirLock;
  readonly paths: AccountPaths;
  readonly addr: string;
  /** The mail password (never log it). */
  readonly password: string;
  readonly displayName: string;
  readonly serverParams: ServerParams;
  /** Upper-case hex fingerprint of the account key. */
  readonly fingerprint: string;
  /** This device's fingerprint (the viewer's `/auth` secret), stored in the data directory. */
  readonly device: StoredDeviceFingerprint;
  /** The installation identity and the keys of stored secrets (docs/identity.md). */
  readonly installation: Installation;
  /** True when this start registered a new account with the relay. */
  readonly firstBoot: boolean;
  /** The license (step 3); the caller retries `licenseRetryUrl` in the background if set. */
  readonly license: LicenseManager;
  readonly licenseRetryUrl?: string;
  /** Duration of each step in ms, by step name. */
  readonly timings: Readonly<Record<string, number>>;
}

const STEPS = 7;

/**
 * Runs `fn` as step `n`, logging its duration (and its failure, which is rethrown). Steps keep
 * docs/contract.md §1.2's numbers 1–7; "2b" is the product's step between them (store the device
 * fingerprint), "2c" the installation identity (docs/identity.md).
 */
async function step<T>(
  timings: Record<string, number>,
  n: number | string,
  name: string,
  fn: () => T | Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  const ms = () => Math.round((performance.now() - t0) * 10) / 10;
  try {
    const out = await fn();
    timings[name] = ms();
    log.info(`step ${n}/${STEPS} ${name}: done`, { ms: timings[name] });
    return out;
  } catch (err) {
    // The error itself is printed once, by the daemon, when the start fails.
    log.error(`step ${n}/${STEPS} ${name}: failed`, { ms: ms() });
    throw fullDiskStartError(err, name) ?? err;
  }
}

/**
 * A step that cannot do without space (setting up a new account, a database upgrade) on a full
 * disk: a start error that says so. A provisioned account comes up on a full disk instead; its
 * steps go on without the writes they can leave for later.
 */
function fullDiskStartError(err: unknown, name: string): StartupError | undefined {
  if (diskFullError(err) === undefined) return undefined;
  let root = err as Error;
  while (root.cause instanceof Error) root = root.cause;
  return new StartupError(
    `the disk is full (${root.message}): the start step "${name}" cannot go on without ` +
      "space (a new account is being set up, or the database needs an upgrade); free space in " +
      "the data directory and start again",
    undefined,
    { cause: err },
  );
}

/**
 * Runs docs/contract.md §1.2 steps 1–6 (data dir + lock, accounts dir + store, then 2b: store the
 * device fingerprint, then license, relay registration, autodiscovery, keys); the caller starts the
 * HTTP server (step 7). On failure the store is closed, the lock released, `ConfigureProgress` 0
 * published, and a StartupError thrown.
 */
export async function provision(
  config: GatewayConfig,
  partial: Partial<ProvisionDeps> = {},
): Promise<ProvisionResult> {
  const deps: ProvisionDeps = {
    ...networkLoginCheckers,
    probeSmtpSize: probeSmtpSizeLimit,
    fetch: (input, init) => fetch(input, init),
    clock: Date.now,
    generateKey: generateAccountKey,
    probeTimeoutMs: 5_000,
    loginTimeoutMs: 30_000,
    registerTimeoutMs: 30_000,
    ...partial,
  };
  const timings: Record<string, number> = {};
  const lock = await step(timings, 1, "data directory", () => {
    prepareDataDir(config.dataDir);
    prepareDefaultFilesDir(config.filesDir, config.dataDir);
    return DataDirLock.acquire(config.dataDir);
  });
  const opened: { store?: Store } = {};
  let configuring = false;
  try {
    const paths = await step(timings, 2, "accounts directory", () => {
      const p = prepareAccountsDir(config.dataDir);
      opened.store = openStore(p.databasePath);
      return p;
    });
    const db = opened.store!;
    configuring = db.config.get(ConfigKey.SERVER_PARAMS) === undefined;
    // The product stores the device fingerprint before activating the license
    // (docs/product-compat.md#start-order).
    const device = await step(
      timings,
      "2b",
      "device fingerprint",
      () =>
        unlessDiskFull(
          "storing the device fingerprint",
          () => storeDeviceFingerprint(config.dataDir, deps.fingerprintSources),
          async () => ({
            ...await loadDeviceFingerprint(config.dataDir, deps.fingerprintSources),
            storedPath: `${config.dataDir}/${DataDirLayout.DEVICE_FINGERPRINT}`,
            change: "unchanged" as const,
          }),
        ),
    );
    const installation = await step(
      timings,
      "2c",
      "installation identity",
      () => openInstallation(db, device, paths.blobDir, deps.clock()),
    );
    const license = await step(
      timings,
      3,
      "license",
      () =>
        startLicense(config, db.config, {
          fetch: deps.fetch,
          fingerprint: device.fingerprint,
          machineId: device.machineId,
          ...deps.license,
        }),
    );
    const account = await step(
      timings,
      4,
      "relay registration",
      () => registerStep(config, db, deps),
    );
    const serverParams = await step(
      timings,
      5,
      "mail autodiscovery",
      () => discoverStep(config, db, deps, account.addr, account.password),
    );
    const key = await step(
      timings,
      6,
      "encryption keys",
      () =>
        ensureAccountKey(
          db,
          account.addr,
          deps.generateKey,
          keyCreationTime(deps.clock(), account.relayTime),
        ),
    );
    if (configuring) {
      deps.events?.publish({ kind: "ConfigureProgress", progress: 1000, comment: null });
    }
    return {
      store: db,
      lock,
      paths,
      addr: account.addr,
      password: account.password,
      displayName: db.config.get(ConfigKey.DISPLAY_NAME) ?? "",
      serverParams,
      fingerprint: key.fingerprint,
      device,
      installation,
      firstBoot: account.registered,
      license: license.manager,
      ...(license.retryUrl === undefined ? {} : { licenseRetryUrl: license.retryUrl }),
      timings,
    };
  } catch (err) {
    if (configuring) {
      deps.events?.publish({ kind: "ConfigureProgress", progress: 0, comment: describeError(err) });
    }
    opened.store?.close();
    lock.release();
    throw err;
  }
}

function openStore(path: string): Store {
  try {
    return Store.open(path);
  } catch (cause) {
    throw new StartupError(
      `Cannot open the account database ${path}: ${errText(cause)}`,
      undefined,
      {
        cause,
      },
    );
  }
}

/** Step 4: the stored account, or a new one from the relay (EDGE_PROFILE required then). */
async function registerStep(config: GatewayConfig, store: Store, deps: ProvisionDeps) {
  const addr = store.config.get(ConfigKey.ADDR);
  const password = store.config.get(ConfigKey.MAIL_PASSWORD);
  if (addr !== undefined && password !== undefined) {
    const stored = store.config.get(ConfigKey.DISPLAY_NAME);
    if (config.profile !== undefined && config.profile !== stored) {
      const profile = config.profile;
      await unlessDiskFull("the display name from EDGE_PROFILE", () => {
        store.config.set(ConfigKey.DISPLAY_NAME, profile);
        log.info("display name updated from EDGE_PROFILE (or PRIVITTY_PROFILE)");
      }, () => {});
    }
    log.info("already registered; skipping", { addr });
    return { addr, password, registered: false, relayTime: undefined };
  }
  if (config.profile === undefined) {
    throw new StartupError(
      "EDGE_PROFILE (or PRIVITTY_PROFILE) is required on first start (no account is registered " +
        'yet): set it to the gateway\'s display name, e.g. EDGE_PROFILE="Gateway 1"',
    );
  }
  log.info("registering with the relay", { url: config.relay.registerUrl });
  const account = await registerOnRelay(
    config.relay.registerUrl,
    deps.fetch,
    deps.registerTimeoutMs,
  );
  store.db.tx(() => {
    store.config.set(ConfigKey.ADDR, account.email);
    store.config.set(ConfigKey.MAIL_PASSWORD, account.password);
    store.config.set(ConfigKey.DISPLAY_NAME, config.profile!);
  });
  log.info("relay assigned the address", { addr: account.email });
  return {
    addr: account.email,
    password: account.password,
    registered: true,
    relayTime: account.relayTime,
  };
}

/** Step 5: the stored server parameters, or discovered and verified ones. */
async function discoverStep(
  config: GatewayConfig,
  store: Store,
  deps: ProvisionDeps,
  addr: string,
  password: string,
): Promise<ServerParams> {
  const stored = loadServerParams(store, config.allowPlaintextMail);
  if (stored !== undefined) {
    log.info(
      "mail servers already configured; skipping (the IMAP loop connects in the background)",
    );
    return stored;
  }
  const params = await discoverServers(addr, password, config.relay, {
    fetch: deps.fetch,
    verifyImap: deps.verifyImap,
    verifySmtp: deps.verifySmtp,
    probeTimeoutMs: deps.probeTimeoutMs,
    loginTimeoutMs: deps.loginTimeoutMs,
    allowPlaintext: config.allowPlaintextMail,
    events: deps.events,
  });
  saveServerParams(store, params, deps.clock());
  await learnRelayLimit(store, params.smtp, password, deps);
  return params;
}

/**
 * Stores the relay's message size limit (SMTP SIZE) for the account just configured, so sends
 * are checked against it from the first one; best effort: the SMTP loop asks again whenever it
 * connects.
 */
async function learnRelayLimit(
  store: Store,
  smtp: Endpoint,
  password: string,
  deps: ProvisionDeps,
): Promise<void> {
  try {
    const bytes = await deps.probeSmtpSize(smtp, password, Math.min(deps.loginTimeoutMs, 10_000));
    setRelayMessageLimit(store, bytes);
    log.info("relay message size limit", { bytes: bytes ?? null });
  } catch (err) {
    log.info("relay message size limit not learned yet", { error: errText(err) });
  }
}
