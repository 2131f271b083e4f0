/**
 * The license of a data directory judged without a running daemon (the CLI's
 * `--accounts DIR license status`): the same verification and judgment as the daemon's, from
 * the stored device fingerprint and, read-only, the account database's clock mark.
 */
import { DataDirLayout } from "../constants.ts";
import { ConfigKey, Store } from "../store/mod.ts";
import { licenseDeviceId } from "./device_id.ts";
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
    const manager = await LicenseManager.open({
      dataDir: dir,
      deviceId: fingerprint === undefined ? "" : await licenseDeviceId(fingerprint),
      keys,
      state: {
        get: (key: ConfigKey) => store?.config.get(key),
        set: () => {}, // read-only: the daemon keeps the clock mark
      },
      clock: options.clock,
    });
    const out = manager.describe();
    if (fingerprint === undefined) {
      out.device_id = null;
      if (manager.installed()) {
        out.reason = `${out.reason}; this device is unknown: ${dir}/` +
          `${DataDirLayout.DEVICE_FINGERPRINT} is missing (the daemon writes it at start)`;
      }
    }
    return out;
  } finally {
    store?.close();
  }
}
