/**
 * A provisioned-looking data directory for backup tests: the accounts index, a real account
 * database with an address and a row of journal, two blobs, a license file, and the host files a
 * backup must leave out (`machine-id`, `device-fingerprint`); the events an export published.
 */
import { DataDirLayout } from "../../src/constants.ts";
import type { GatewayEvent } from "../../src/events/types.ts";
import type { KdfParams } from "../../src/backup/kdf.ts";
import { prepareAccountsDir } from "../../src/provision/accounts_dir.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";

/** A cheap Argon2id cost for tests (the default is tested in sealed_stream_test.ts). */
export const TEST_KDF: KdfParams = { memoryKiB: 64, iterations: 1, parallelism: 1 };
export const ADDR = "gw@relay.test";
export const BLOBS = {
  "0123456789abcdef0123456789abcdef.txt": "hello blob",
  "fedcba9876543210fedcba9876543210.prv": "x".repeat(200_000),
} as const;

/** A data directory with state in it, and its open store. */
export interface SourceDir {
  readonly dataDir: string;
  readonly filesDir: string;
  readonly store: Store;
}

/** Lays out `<root>/data` with an account and `<root>/data/files`. */
export function makeSourceDir(root: string): SourceDir {
  const dataDir = `${root}/data`;
  Deno.mkdirSync(dataDir, { mode: 0o700 });
  const paths = prepareAccountsDir(dataDir);
  const store = Store.open(paths.databasePath);
  store.config.set(ConfigKey.ADDR, ADDR);
  store.events.save([{ id: 7, data: "{}" }], 100, 7);
  for (const [name, text] of Object.entries(BLOBS)) {
    Deno.writeTextFileSync(`${paths.blobDir}/${name}`, text);
  }
  Deno.writeTextFileSync(`${paths.blobDir}/.write-temp123`, "half written");
  Deno.writeTextFileSync(`${dataDir}/${DataDirLayout.LICENSE_FILE}`, "license bytes");
  Deno.writeTextFileSync(`${dataDir}/${DataDirLayout.MACHINE_ID}`, "0123456789abcdef\n");
  Deno.writeTextFileSync(`${dataDir}/${DataDirLayout.DEVICE_FINGERPRINT}`, "fp\n");
  const filesDir = `${dataDir}/${DataDirLayout.FILES_DIR}`;
  Deno.mkdirSync(filesDir, { mode: 0o700 });
  return { dataDir, filesDir, store };
}

/** Collects what was published. */
export function recorder(): { events: GatewayEvent[]; publish(e: GatewayEvent): void } {
  const events: GatewayEvent[] = [];
  return { events, publish: (e) => void events.push(e) };
}

/** The `ImexProgress` values among `events`, in order. */
export function progressOf(events: readonly GatewayEvent[]): number[] {
  return events.flatMap((e) => e.kind === "ImexProgress" ? [e.progress] : []);
}

/** Every path under `dir`, relative, sorted (for "nothing was written"). */
export function listTree(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) {
      const rel = `${prefix}${e.name}`;
      out.push(rel);
      if (e.isDirectory) out.push(...listTree(`${dir}/${e.name}`, `${rel}/`));
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out.sort();
}
