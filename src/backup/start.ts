/**
 * The start step before provisioning (docs/backup.md#restoring): with `--import-backup` /
 * EDGE_IMPORT_BACKUP, restore the backup into the empty data directory, so provisioning finds an
 * account that is already registered, configured and keyed. A data directory already restored
 * from that same file (a container keeps its environment) is left alone.
 */
import type { GatewayConfig } from "../config.ts";
import { StartupError } from "../errors.ts";
import { logger } from "../log.ts";
import { exposedFullGc } from "../memory/burst_gc.ts";
import { backupId, restoreBackup, RESTORED_MARK, restoreFailure } from "./restore.ts";

const log = logger("backup");

/** Reads the restored-from mark of `dataDir`, if any. */
function restoredFrom(dataDir: string): string | undefined {
  try {
    return Deno.readTextFileSync(`${dataDir}/${RESTORED_MARK}`).trim();
  } catch {
    return undefined;
  }
}

/**
 * Restores `config.importBackup` when set; a StartupError saying which problem (wrong passphrase,
 * truncated, damaged, not a backup, data directory not empty) when it cannot, nothing written.
 */
export async function restoreAtStart(
  config: Pick<GatewayConfig, "dataDir" | "importBackup" | "backupPassphrase">,
): Promise<void> {
  const file = config.importBackup;
  if (file === undefined) return;
  const mark = restoredFrom(config.dataDir);
  if (mark !== undefined) {
    const id = await backupId(file).catch(() => undefined);
    if (id === undefined || id === mark) {
      log.info(
        `the data directory was restored from a backup before${
          id === undefined ? "" : " (this one)"
        }; --import-backup / EDGE_IMPORT_BACKUP is ignored`,
        { file },
      );
      return;
    }
  }
  const t0 = performance.now();
  log.info("restoring a backup into the data directory before provisioning", { file });
  try {
    const manifest = await restoreBackup(file, config.dataDir, config.backupPassphrase ?? "");
    log.info("backup restored", {
      addr: manifest.addr,
      blobs: manifest.blobs,
      taken_at: new Date(manifest.createdAt).toISOString(),
      ms: Math.round(performance.now() - t0),
    });
  } catch (err) {
    throw new StartupError(
      `cannot restore the backup: ${restoreFailure(file, config.dataDir, err)}`,
      undefined,
      { cause: err },
    );
  } finally {
    exposedFullGc()?.(); // Argon2id's 64 MiB is garbage now
  }
}
