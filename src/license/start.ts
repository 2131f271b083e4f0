/**
 * The license at start (docs/contract.md §1.2 step 3): open the license, activate from
 * EDGE_LICENSE_URL when no license file exists, and, when the license server cannot be reached,
 * start anyway with
 * `no_license` and keep retrying with back-off in the background.
 */
import { sleep as abortableSleep } from "../sleep.ts";
import type { GatewayConfig } from "../config.ts";
import { describeError, diskFullError } from "../errors.ts";
import { logger } from "../log.ts";
import { ConfigKey, type ConfigStore } from "../store/config_store.ts";
import { loadDeviceFingerprint } from "../viewer/device_fingerprint.ts";
import { LicenseClient, LicenseServerError } from "./client.ts";
import { legacyLicenseDeviceId, licenseDeviceId } from "./device_id.ts";
import { redactUrl } from "./license_file.ts";
import { LicenseManager } from "./manager.ts";
import { loadTrustedKeys } from "./trust.ts";
import type { TrustedKey } from "./verify.ts";

const log = logger("license");

/** Seams of the start step; the defaults are this machine's. */
export interface LicenseStartDeps {
  readonly fetch?: typeof fetch;
  /** Wall clock, Unix ms. */
  readonly clock?: () => number;
  /** The trusted keys (default: loadTrustedKeys from the build and the config). */
  readonly keys?: readonly TrustedKey[];
  /** The device fingerprint (default: computed by viewer/device_fingerprint.ts); v1 ids only. */
  readonly fingerprint?: string;
  /** The machine id (default: the one the fingerprint was computed from). */
  readonly machineId?: string;
  /** Limit of one license-server request (default 10 s). */
  readonly timeoutMs?: number;
}

/** The opened license and, when activation failed for a passing reason, the URL to retry. */
export interface LicenseAtStart {
  readonly manager: LicenseManager;
  readonly retryUrl?: string;
}

/** Opens the license and activates it from `config.licenseUrl` if none is installed. */
export async function startLicense(
  config: GatewayConfig,
  state: Pick<ConfigStore, "get" | "set">,
  deps: LicenseStartDeps = {},
): Promise<LicenseAtStart> {
  const device = deps.fingerprint !== undefined && deps.machineId !== undefined
    ? { fingerprint: deps.fingerprint, machineId: deps.machineId }
    : await loadDeviceFingerprint(config.dataDir);
  // Created by migration 15 (docs/identity.md); a database without one is a bug.
  const installationId = state.get(ConfigKey.INSTALLATION_ID);
  if (installationId === undefined) throw new Error("the account database has no installation_id");
  const manager = await LicenseManager.open({
    dataDir: config.dataDir,
    deviceId: await licenseDeviceId(installationId, device.machineId),
    legacyDeviceId: await legacyLicenseDeviceId(device.fingerprint),
    installationId,
    keys: deps.keys ?? await loadTrustedKeys({ extraKeyFiles: config.licenseTrustedKeys }),
    state,
    clock: deps.clock,
    client: new LicenseClient({ fetch: deps.fetch, timeoutMs: deps.timeoutMs }),
  });
  if (manager.installed()) {
    const { status, reason } = manager.verdict();
    log.info(`license file present; skipping activation (status ${status})`, { reason });
    return { manager };
  }
  const url = config.licenseUrl;
  if (url === undefined) {
    log.info("no EDGE_LICENSE_URL; skipping (status no_license)");
    return { manager };
  }
  try {
    await manager.activate(url);
    return { manager };
  } catch (err) {
    if (passing(err)) {
      log.warn(
        "license activation failed; starting with status no_license and retrying in the " +
          "background (messaging works meanwhile)",
        { error: describeError(err) },
      );
      return { manager, retryUrl: url };
    }
    log.error(
      "license activation refused; starting with status no_license (fix the cause, then run: " +
        "edge-gateway license activate <url>)",
      { error: describeError(err) },
    );
    return { manager };
  }
}

/**
 * Whether an activation failed for a reason that passes: the license server could not be
 * reached, or the disk was full when the license file was written.
 */
function passing(err: unknown): boolean {
  if (diskFullError(err) !== undefined) return true;
  return err instanceof Error && err.cause instanceof LicenseServerError && err.cause.transient;
}

/** Back-off of the background activation. */
export interface RetryOptions {
  /** First wait in ms (default 2 s); doubled after every failure up to `maxMs`. */
  readonly initialMs?: number;
  /** Longest wait in ms (default 5 min). */
  readonly maxMs?: number;
  /** Waits `ms` or until `signal` aborts (tests pass a fake). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Retries activation from `url` with exponential back-off until it succeeds, the server refuses
 * for good, a license got installed another way (`license activate`), or `signal` aborts.
 */
export async function retryActivation(
  manager: LicenseManager,
  url: string,
  signal: AbortSignal,
  options: RetryOptions = {},
): Promise<void> {
  const sleep = options.sleep ?? abortableSleep;
  const maxMs = options.maxMs ?? 300_000;
  let delay = options.initialMs ?? 2_000;
  for (let attempt = 1;; attempt++) {
    await sleep(delay, signal);
    if (signal.aborted || manager.installed()) return;
    try {
      await manager.activate(url);
      log.info("background license activation succeeded", { attempt });
      return;
    } catch (err) {
      if (signal.aborted) return;
      if (!passing(err)) {
        log.error("background license activation refused; giving up", {
          url: redactUrl(url),
          error: describeError(err),
        });
        return;
      }
      delay = Math.min(delay * 2, maxMs);
      log.info("license server still unreachable; retrying", {
        attempt,
        next_in_ms: delay,
      });
    }
  }
}
