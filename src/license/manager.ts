/**
 * The gateway's license: reads and verifies `privitty.lic`, judges it on every call (status.ts)
 * against the injected clock and the clock high-water mark (local_state.ts), and activates, syncs
 * and deactivates it through the license server without a restart.
 */
import { DataDirLayout, type LicenseStatus } from "../constants.ts";
import { describeError, GatewayError } from "../errors.ts";
import { logger } from "../log.ts";
import { ConfigKey, type ConfigStore } from "../store/config_store.ts";
import type { LicenseClaims } from "./claims.ts";
import { LicenseClient, type LicenseDevice, LicenseServerError } from "./client.ts";
import { LicenseLocalState } from "./local_state.ts";
import { type LicenseFile, parseLicenseFile, redactUrl, writeLicenseFile } from "./license_file.ts";
import {
  type InstallationMove,
  judgeLicense,
  type LicenseFileState,
  type LicenseVerdict,
  permitsGatedCalls,
} from "./status.ts";
import { type TrustedKey, verifyLicenseToken } from "./verify.ts";

const log = logger("license");

/** Everything a LicenseManager needs. */
export interface LicenseManagerOptions {
  readonly dataDir: string;
  /** This device's license device id (device_id.ts, v2). */
  readonly deviceId: string;
  /** This device's v1 id: a license bound to it still counts until re-bound (docs/identity.md). */
  readonly legacyDeviceId?: string | undefined;
  /** Sent with activate and sync, so the server moves this installation's seat. */
  readonly installationId?: string | undefined;
  readonly keys: readonly TrustedKey[];
  /** Where the clock high-water mark and deactivations are kept (the account database). */
  readonly state: Pick<ConfigStore, "get" | "set">;
  /** Wall clock, Unix ms (default `Date.now`). */
  readonly clock?: (() => number) | undefined;
  /** Monotonic clock, ms (default `performance.now`): moves the clock high-water mark. */
  readonly monotonic?: () => number;
  readonly client?: LicenseClient;
}

/** A license-server failure or an unacceptable license, as an RPC -1 error. */
export class LicenseError extends GatewayError {}

/**
 * License state consulted by the dispatch gate (`license: true` methods), and its management
 * (`license_activate|sync|deactivate`; absent in sources that only report a status).
 */
export interface LicenseSource {
  /** `"no_license"` or another status value; gated methods run only when `isActive()`. */
  status(): string;
  isActive(): boolean;
  /** Why the status is what it is, in words a person can act on ('' when nothing to add). */
  reason(): string;
  /** The status plus the license's public fields (id, type, expiry), for `license_status`. */
  describe(): Record<string, string | number | boolean | null>;
  /** Activates the license behind a delivery URL; resolves with `describe()`. */
  activate(url: string): Promise<Record<string, string | number | boolean | null>>;
  /** Re-fetches the installed license from its delivery URL; resolves with `describe()`. */
  sync(): Promise<Record<string, string | number | boolean | null>>;
  /** Frees this device's seat; the license file stays but is no longer honoured. */
  deactivate(): Promise<void>;
}

/** The license source of a running gateway. */
export class LicenseManager implements LicenseSource {
  /** Absolute path of `privitty.lic`. */
  readonly path: string;
  readonly deviceId: string;
  readonly #legacyDeviceId: string | undefined;
  readonly #installationId: string | undefined;
  readonly #state: Pick<ConfigStore, "get" | "set">;
  readonly #keys: readonly TrustedKey[];
  readonly #local: LicenseLocalState;
  readonly #clock: () => number;
  readonly #client: LicenseClient;
  #file: LicenseFileState;
  #contents: LicenseFile | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** The status last judged since the file was (re)read, to log changes that come with time. */
  #lastStatus: LicenseStatus | undefined;

  private constructor(options: LicenseManagerOptions, read: LicenseRead) {
    this.path = licensePath(options.dataDir);
    this.deviceId = options.deviceId;
    this.#legacyDeviceId = options.legacyDeviceId;
    this.#installationId = options.installationId;
    this.#state = options.state;
    this.#keys = options.keys;
    this.#file = read.file;
    this.#contents = read.contents;
    // The mark starts from the stored one or the issuer's time of the copy read at start.
    this.#local = new LicenseLocalState(options.state, {
      issuedAt: this.claims()?.issuedAt,
      monotonic: options.monotonic,
    });
    this.#clock = options.clock ?? Date.now;
    this.#client = options.client ?? new LicenseClient();
  }

  /** Opens the manager: reads the license file, then records the clock. */
  static async open(options: LicenseManagerOptions): Promise<LicenseManager> {
    const read = await readLicense(licensePath(options.dataDir), options.keys);
    const manager = new LicenseManager(options, read);
    const legacy = `${options.dataDir}/${DataDirLayout.LEGACY_LICENSE_FILE}`;
    if (await exists(legacy)) {
      log.warn(
        `${DataDirLayout.LEGACY_LICENSE_FILE} (an unsigned license of an earlier build) is ` +
          "ignored; activate a signed license with: edge-gateway license activate <url>",
        { path: legacy },
      );
    }
    manager.status();
    return manager;
  }

  /** Re-reads and re-verifies the license file. */
  async reload(): Promise<void> {
    const read = await readLicense(this.path, this.#keys);
    this.#file = read.file;
    this.#contents = read.contents;
    this.#lastStatus = undefined;
  }

  /** True when a license file is present (whatever its status). */
  installed(): boolean {
    return this.#file.kind !== "absent";
  }

  /** The verified claims of the installed license, if it verified. */
  claims(): LicenseClaims | undefined {
    return this.#file.kind === "verified" ? this.#file.claims : undefined;
  }

  /**
   * Judges the license now and moves the clock high-water mark forward. Logs a status that
   * changed since the last judgment of the same file: one that came with time or the clock
   * (`clock_tampered` → `active` once the clock is past the mark again, `active` → `grace_period`
   * at expiry), as no one asked for it.
   */
  verdict(): LicenseVerdict {
    const now = this.#clock();
    const claims = this.claims();
    const verdict = judgeLicense({
      file: this.#file,
      deviceId: this.deviceId,
      legacyDeviceId: this.#legacyDeviceId,
      moved: this.moved(),
      now,
      highWater: this.#local.highWater(),
      deactivatedIssuedAt: claims && this.#local.deactivatedIssuedAt(claims.id),
    });
    this.#local.advance(now);
    if (this.#lastStatus !== undefined && this.#lastStatus !== verdict.status) {
      log.info(`license status changed from ${this.#lastStatus} to ${verdict.status}`, {
        reason: verdict.reason,
      });
    }
    this.#lastStatus = verdict.status;
    return verdict;
  }

  status(): LicenseStatus {
    return this.verdict().status;
  }

  /** The installation's move not yet settled by an activation (docs/identity.md), if any. */
  moved(): InstallationMove | undefined {
    const raw = this.#state.get(ConfigKey.INSTALLATION_MOVED);
    if (raw === undefined || raw === "") return undefined;
    try {
      return JSON.parse(raw) as InstallationMove;
    } catch {
      return undefined;
    }
  }

  /** Who this device is to the license server; `previousDeviceId` lets it move the seat. */
  #device(): LicenseDevice {
    const bound = this.claims()?.device;
    return {
      deviceId: this.deviceId,
      installationId: this.#installationId,
      previousDeviceId: bound !== undefined && bound !== this.deviceId ? bound : undefined,
    };
  }

  reason(): string {
    return this.verdict().reason;
  }

  /** True while gated methods may run: `active` or `grace_period`. */
  isActive(): boolean {
    return permitsGatedCalls(this.status());
  }

  /** Status, reason and the license's public fields, as `license_status` reports them. */
  describe(): Record<string, string | number | boolean | null> {
    const { status, reason, code } = this.verdict();
    const out: Record<string, string | number | boolean | null> = { status, reason };
    if (code !== undefined) out.reason_code = code;
    const c = this.claims();
    if (c !== undefined) {
      Object.assign(out, {
        license_id: c.id,
        license_type: c.type,
        customer: c.customer,
        issued_at: new Date(c.issuedAt).toISOString(),
        expires_at: new Date(c.expiresAt).toISOString(),
        max_devices: c.maxDevices,
        grace_days: c.graceDays,
      });
    }
    out.device_id = this.deviceId;
    return out;
  }

  /** Runs license-changing operations one at a time. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Activates the license behind the delivery URL `url` for this device, installs it and
   * reports the new status. Throws LicenseError (nothing installed) when the server refuses or
   * is unreachable, or sends a license that does not verify or is bound to another device.
   */
  activate(url: string): Promise<Record<string, string | number | boolean | null>> {
    return this.#serial(async () => {
      const delivered = await this.#call(() => this.#client.activate(url, this.#device()));
      const claims = await this.#install(url, delivered.license_jwt, delivered.customer_name);
      log.info("license activated", {
        license_id: claims.id,
        license_type: claims.type,
        expires_at: new Date(claims.expiresAt).toISOString(),
        max_devices: claims.maxDevices,
        url: redactUrl(url),
      });
      return this.describe();
    });
  }

  /** Fetches the current copy (renewed, revoked, grace reset) from the URL it came from. */
  sync(): Promise<Record<string, string | number | boolean | null>> {
    return this.#serial(async () => {
      const url = this.#installedUrl("sync");
      const delivered = await this.#call(() => this.#client.sync(url, this.#device()));
      const claims = await this.#install(url, delivered.license_jwt, delivered.customer_name);
      log.info("license synced", {
        license_id: claims.id,
        expires_at: new Date(claims.expiresAt).toISOString(),
        revoked: claims.revoked,
        status: this.status(),
      });
      return this.describe();
    });
  }

  /** Frees this device's seat on the server; the file stays but is no longer honoured. */
  deactivate(): Promise<void> {
    return this.#serial(async () => {
      const url = this.#installedUrl("deactivate");
      const claims = this.claims();
      // A license still bound under the v1 id holds its seat under that id.
      const bound = claims?.device === this.#legacyDeviceId ? claims?.device : undefined;
      await this.#call(() => this.#client.deactivate(url, bound ?? this.deviceId));
      if (claims !== undefined) this.#local.markDeactivated(claims.id, claims.issuedAt);
      log.info("license deactivated; its seat is free and the file is kept for inspection", {
        license_id: claims?.id ?? null,
        path: this.path,
      });
    });
  }

  #installedUrl(action: string): string {
    if (this.#file.kind === "absent") {
      throw new LicenseError(
        `cannot ${action} the license: no license is installed (status no_license); ` +
          "activate one with: edge-gateway license activate <url>",
      );
    }
    const url = this.#contents?.url;
    if (url === undefined) {
      throw new LicenseError(
        `cannot ${action} the license: the license file names no delivery URL; activate it ` +
          "again with: edge-gateway license activate <url>",
      );
    }
    return url;
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof LicenseServerError) {
        throw new LicenseError(err.message, undefined, { cause: err });
      }
      throw err;
    }
  }

  /** Verifies a delivered token for this device, writes the file, resets the clock mark. */
  async #install(url: string, token: string, customer?: string): Promise<LicenseClaims> {
    const verified = await verifyLicenseToken(token, this.#keys);
    if (!verified.ok) {
      throw new LicenseError(
        `the license server at ${redactUrl(url)} sent a license this gateway cannot accept: ` +
          verified.reason,
      );
    }
    if (verified.claims.device !== this.deviceId) {
      throw new LicenseError(
        `the license server at ${redactUrl(url)} sent a license bound to another device`,
      );
    }
    await writeLicenseFile(this.path, {
      license_jwt: token,
      ...(customer === undefined ? {} : { customer_name: customer }),
      url,
    });
    // The server just gave this device a seat (activate) or confirmed it holds one (sync), so
    // an earlier deactivation of this license here no longer applies.
    this.#local.clearDeactivated(verified.claims.id);
    // Bound to this machine now: a move seen at start is settled.
    if (this.moved() !== undefined) this.#state.set(ConfigKey.INSTALLATION_MOVED, "");
    // The issuer's signed clock replaces the high-water mark and restarts its lived-through
    // time: whatever the mark held is forgiven, the issuer's time is the truth.
    this.#local.setHighWater(verified.claims.issuedAt);
    await this.reload();
    return verified.claims;
  }
}

/** The license file as read: its judged state and, when it parsed, its contents. */
interface LicenseRead {
  readonly file: LicenseFileState;
  readonly contents?: LicenseFile;
}

function licensePath(dataDir: string): string {
  return `${dataDir}/${DataDirLayout.LICENSE_FILE}`;
}

/** Reads and verifies the license file at `path`. */
async function readLicense(path: string, keys: readonly TrustedKey[]): Promise<LicenseRead> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    return err instanceof Deno.errors.NotFound ? { file: { kind: "absent" } } : {
      file: { kind: "unusable", reason: `the license file cannot be read (${describeError(err)})` },
    };
  }
  const parsed = parseLicenseFile(text);
  if (typeof parsed === "string") return { file: { kind: "unusable", reason: parsed } };
  const verified = await verifyLicenseToken(parsed.license_jwt, keys);
  if (!verified.ok) log.warn("the license file is not valid", { reason: verified.reason });
  return {
    file: verified.ok
      ? { kind: "verified", claims: verified.claims }
      : { kind: "unusable", reason: verified.reason },
    contents: parsed,
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
