/**
 * This machine's device fingerprint for the CLI (`fingerprint`, `view`): the value stored by the
 * daemon in `--accounts DIR`, or computed here as the daemon does (MAC + machine id), which
 * needs `--allow-sys=networkInterfaces` and `--allow-read=/etc/machine-id`.
 */
import { DataDirLayout } from "../constants.ts";
import { computeFingerprint, primaryMac } from "../viewer/device_fingerprint.ts";
import { CliFailure } from "./offline_license.ts";

/** The fingerprint and where it came from. */
export interface CliFingerprint {
  readonly fingerprint: string;
  readonly source: string;
}

/** Reads `<dir>/device-fingerprint` (as the daemon stored it), or undefined. */
function stored(dir: string): CliFingerprint | undefined {
  const path = `${dir.replace(/\/+$/, "")}/${DataDirLayout.DEVICE_FINGERPRINT}`;
  try {
    const value = Deno.readTextFileSync(path).trim().split(/\s+/)[0] ?? "";
    return /^[0-9a-f]{64}$/.test(value) ? { fingerprint: value, source: path } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fingerprint: stored in `accounts` when given and readable; else computed from the first
 * non-loopback MAC and `/etc/machine-id`. A CLI without those permissions fails with the flags
 * it needs (never a silently different value).
 */
export async function cliFingerprint(accounts?: string): Promise<CliFingerprint> {
  const fromDir = accounts === undefined ? undefined : stored(accounts);
  if (fromDir !== undefined) return fromDir;
  let interfaces: Deno.NetworkInterfaceInfo[];
  let machineId: string;
  try {
    interfaces = Deno.networkInterfaces();
    machineId = Deno.readTextFileSync("/etc/machine-id").trim();
  } catch (err) {
    const denied = err instanceof Deno.errors.NotCapable ||
      err instanceof Deno.errors.PermissionDenied;
    throw new CliFailure(
      denied
        ? "cannot compute the device fingerprint: run the CLI with --allow-sys=networkInterfaces " +
          "--allow-read=/etc/machine-id (as the compiled binary is), or give --accounts DIR of the " +
          "daemon's data directory"
        : `cannot compute the device fingerprint: ${(err as Error).message}; give --accounts DIR ` +
          "of the daemon's data directory",
    );
  }
  if (machineId === "") throw new CliFailure("/etc/machine-id is empty; give --accounts DIR");
  const mac = primaryMac(interfaces) ?? "";
  return { fingerprint: await computeFingerprint(mac, machineId), source: "computed" };
}
