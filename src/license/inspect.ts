/**
 * The license of a data directory judged without a running daemon (the CLI's
 * `--accounts DIR license status`): the same verification and judgment as the daemon's, from
 * the installation id and clock mark in the account database (read-only), the machine id and
 * the stored device fingerprint (v1 bindings).
 */
import { DataDirLayout } from "../constants.ts";
import { ConfigKey, Store } from "../store/mod.ts";
import { findMachineId } from "../viewer/device_fingerprint.ts";
import { legacyLicenseDeviceId, licenseDeviceId } from "./device_id.ts";
import { LicenseManager } from "./manager.ts";
import { loadTrustedKeys } from "./trust.ts";
import type { TrustedKey } from "./verify.ts";

/** Seams of {@link inspectLicense}. */
export interface InspectOptions {
  /** Default: the built-in keys and, run from source, EDGE_LICENSE_TRUSTED_KEYS. */
  readonly keys?: readonly TrustedKey[];
  readonly clock?: () => number;
}

/** Reads an environment variable the permission set may not grant (then it is unset). */
function envOrUndefined(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(path)).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** `license_status` as the daemon would answer it for `dir`; never writes. */
export async function inspectLicense(
  dir: string,
  options: InspectOptions = {},
): Promise<Record<string, string | number | boolean | null>> {
  const extra = envOrUndefined("EDGE_LICENSE_TRUSTED_KEYS") ??
    envOrUndefined("PRIVITTY_LICENSE_TRUSTED_KEYS") ?? "";
  const keys = options.keys ?? await loadTrustedKeys({
    extraKeyFiles: extra.split(",").map((p) => p.trim()).filter((p) => p !== ""),
  });
  const fingerprint = await readTrimmed(`${dir}/${DataDirLayout.DEVICE_FINGERPRINT}`);
  let store: Store | undefined;
  try {
    store = Store.openReadOnly(`${dir}/${DataDirLayout.DATABASE}`);
  } catch { /* no database yet: no clock mark, no deactivation */ }
  try {
    const installationId = store?.config.get(ConfigKey.INSTALLATION_ID);
    const machineId = await findMachineId(dir);
    const known = installationId !== undefined && machineId !== undefined;
    const manager = await LicenseManager.open({
      dataDir: dir,
      deviceId: known ? await licenseDeviceId(installationId, machineId) : "",
      legacyDeviceId: fingerprint === undefined
        ? undefined
        : await legacyLicenseDeviceId(fingerprint),
      keys,
      state: {
        get: (key: ConfigKey) => store?.config.get(key),
        set: () => {}, // read-only: the daemon keeps the clock mark
      },
      clock: options.clock,
    });
    const out = manager.describe();
    if (!known) {
      out.device_id = null;
      if (manager.installed()) {
        out.reason = `${out.reason}; this device is unknown: the account database's ` +
          "installation id or the machine id is missing (the daemon creates them at start)";
      }
    }
    return out;
  } finally {
    store?.close();
  }
}
