/**
 * The device fingerprint the viewer presents to `/auth` (docs/contract.md §5.2):
 * `lowercase_hex(SHA-256(UTF-8(mac + machine_id)))`, plain concatenation with no separator.
 */
import { DataDirLayout } from "../constants.ts";
import { logger } from "../log.ts";
import { toHex } from "../bytes.ts";

const log = logger("viewer");

/** A network interface as `Deno.networkInterfaces()` reports it (only the fields used). */
export interface InterfaceInfo {
  readonly name: string;
  readonly address: string;
  readonly mac: string;
}

/** Injectable inputs (tests); defaults use Deno. */
export interface FingerprintSources {
  readonly interfaces?: () => InterfaceInfo[];
  readonly readTextFile?: (path: string) => Promise<string>;
  /** Creates a new file with mode 0600; fails if it exists. */
  readonly createFile?: (path: string, text: string) => Promise<void>;
  /** Where the system machine id lives (default `/etc/machine-id`). */
  readonly systemMachineIdPath?: string;
}

/** The fingerprint and the inputs it was made from (the MAC and id are not secrets). */
export interface DeviceFingerprint {
  readonly fingerprint: string;
  readonly mac: string;
  readonly machineId: string;
  readonly machineIdPath: string;
}

const ZERO_MAC = /^(00:){5}00$/;

function isInternal(iface: InterfaceInfo): boolean {
  return iface.name === "lo" || iface.address === "::1" || iface.address.startsWith("127.");
}

/**
 * The MAC of the first interface, in the order the OS reports them, that is not loopback and
 * has a non-zero MAC; lower-case `aa:bb:cc:dd:ee:ff`. Undefined when there is none.
 */
export function primaryMac(interfaces: readonly InterfaceInfo[]): string | undefined {
  for (const iface of interfaces) {
    const mac = iface.mac.toLowerCase();
    if (!isInternal(iface) && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(mac) && !ZERO_MAC.test(mac)) {
      return mac;
    }
  }
  return undefined;
}

/** `lowercase_hex(SHA-256(UTF-8(mac + machineId)))`. */
export async function computeFingerprint(mac: string, machineId: string): Promise<string> {
  const data = new TextEncoder().encode(mac + machineId);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return toHex(hash);
}

async function readTrimmed(
  read: (path: string) => Promise<string>,
  path: string,
): Promise<string | undefined> {
  try {
    const value = (await read(path)).trim();
    return value === "" ? undefined : value;
  } catch {
    return undefined; // absent, or not readable under the permission set
  }
}

/**
 * The machine id `readMachineId` would use, without creating one: undefined when neither
 * `/etc/machine-id` nor `<dataDir>/machine-id` has one (read-only callers, the CLI).
 */
export async function findMachineId(
  dataDir: string,
  sources: FingerprintSources = {},
): Promise<string | undefined> {
  const read = sources.readTextFile ?? Deno.readTextFile;
  return await readTrimmed(read, sources.systemMachineIdPath ?? "/etc/machine-id") ??
    await readTrimmed(read, `${dataDir}/${DataDirLayout.MACHINE_ID}`);
}

function randomHex32(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return toHex(bytes);
}

/**
 * The machine id: `/etc/machine-id` trimmed; else `<dataDir>/machine-id`; else a random
 * 32-hex id written there (mode 0600) so it stays stable across restarts.
 */
export async function readMachineId(
  dataDir: string,
  sources: FingerprintSources = {},
): Promise<{ machineId: string; path: string }> {
  const read = sources.readTextFile ?? Deno.readTextFile;
  const systemPath = sources.systemMachineIdPath ?? "/etc/machine-id";
  const system = await readTrimmed(read, systemPath);
  if (system !== undefined) return { machineId: system, path: systemPath };
  const localPath = `${dataDir}/${DataDirLayout.MACHINE_ID}`;
  const local = await readTrimmed(read, localPath);
  if (local !== undefined) return { machineId: local, path: localPath };
  const create = sources.createFile ??
    ((path, text) => Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 }));
  const machineId = randomHex32();
  try {
    await create(localPath, machineId + "\n");
  } catch (err) {
    const raced = await readTrimmed(read, localPath); // another process created it first
    if (raced === undefined) throw err;
    return { machineId: raced, path: localPath };
  }
  log.info("generated a machine id for the device fingerprint", { path: localPath });
  return { machineId, path: localPath };
}

function listInterfaces(sources: FingerprintSources): InterfaceInfo[] {
  try {
    return (sources.interfaces ?? Deno.networkInterfaces)();
  } catch (err) {
    log.warn("cannot list network interfaces; the fingerprint uses an empty MAC", {
      error: err instanceof Error ? err.message : String(err),
    });
    return [];
  }
}

/**
 * Computes this device's fingerprint. Without a usable interface the MAC part is the empty
 * string (logged as a warning); the viewer must then compute it the same way.
 */
export async function loadDeviceFingerprint(
  dataDir: string,
  sources: FingerprintSources = {},
): Promise<DeviceFingerprint> {
  const mac = primaryMac(listInterfaces(sources)) ?? "";
  if (mac === "") log.warn('no network interface with a MAC address; fingerprint uses ""');
  const { machineId, path } = await readMachineId(dataDir, sources);
  const fingerprint = await computeFingerprint(mac, machineId);
  return { fingerprint, mac, machineId, machineIdPath: path };
}

/** A fingerprint after `storeDeviceFingerprint`: where it is, and whether it was (re)written. */
export interface StoredDeviceFingerprint extends DeviceFingerprint {
  readonly storedPath: string;
  /** "created" on the first start, "updated" when the device changed, else "unchanged". */
  readonly change: "created" | "updated" | "unchanged";
}

/**
 * Computes this device's fingerprint and stores it as `<dataDir>/device-fingerprint` (one hex
 * line, mode 0600), where license activation reads it: the product's first-boot order stores
 * the fingerprint before activating the license (docs/product-compat.md#start-order). A changed
 * device (another MAC or machine id) rewrites the file, with a warning: viewers must present the
 * new value.
 */
export async function storeDeviceFingerprint(
  dataDir: string,
  sources: FingerprintSources = {},
): Promise<StoredDeviceFingerprint> {
  const device = await loadDeviceFingerprint(dataDir, sources);
  const storedPath = `${dataDir}/${DataDirLayout.DEVICE_FINGERPRINT}`;
  const previous = await readTrimmed(Deno.readTextFile, storedPath);
  if (previous === device.fingerprint) return { ...device, storedPath, change: "unchanged" };
  await Deno.writeTextFile(storedPath, device.fingerprint + "\n", { mode: 0o600 });
  await Deno.chmod(storedPath, 0o600); // mode applies only when the file is created
  if (previous !== undefined) {
    // INFO: a re-created container's new MAC is routine (docs/identity.md); only viewers care.
    log.info("device fingerprint changed since the last start (network interface or machine id)", {
      path: storedPath,
    });
  }
  return { ...device, storedPath, change: previous === undefined ? "created" : "updated" };
}
