/**
 * The backup's first entry, `manifest.json`: what the file holds and where the account stood,
 * and the names of the entries a restore may write (nothing else is ever written).
 */
import { DataDirLayout } from "../constants.ts";
import { isBlobName } from "../core/blobs.ts";
import { MIGRATIONS } from "../store/migrations.ts";
import { BackupError, BackupFault } from "./errors.ts";

/** The manifest's entry name. */
export const MANIFEST_ENTRY = "manifest.json";

/** What `manifest.json` says. */
export interface BackupManifest {
  /** Always 1 in this format. */
  readonly format: 1;
  /** Unix ms when the snapshot was taken. */
  readonly createdAt: number;
  /** The account's address. */
  readonly addr: string;
  readonly gatewayVersion: string;
  /** The database's schema version (`PRAGMA user_version`). */
  readonly schemaVersion: number;
  /** The SSE journal position in the snapshot: event ids go on after it. */
  readonly journalPosition: number;
  /** How many blobs follow. */
  readonly blobs: number;
}

/** Entries every backup has, besides the manifest. */
export const REQUIRED_ENTRIES: readonly string[] = [
  DataDirLayout.ACCOUNTS_INDEX,
  DataDirLayout.DATABASE,
];

/** Whether a restore may write `name` (relative to the data directory). */
export function restorableEntry(name: string): boolean {
  if (REQUIRED_ENTRIES.includes(name) || name === DataDirLayout.LICENSE_FILE) return true;
  const prefix = `${DataDirLayout.BLOB_DIR}/`;
  return name.startsWith(prefix) && isBlobName(name.slice(prefix.length));
}

/** Parses the manifest's bytes; `file` names the backup in errors. */
export function parseManifest(bytes: Uint8Array, file: string): BackupManifest {
  let m: Partial<BackupManifest>;
  try {
    m = JSON.parse(new TextDecoder().decode(bytes));
  } catch (cause) {
    throw new BackupError(BackupFault.DAMAGED, `backup ${file} has an unreadable manifest`, {
      cause,
    });
  }
  if (m?.format !== 1 || typeof m.addr !== "string" || typeof m.journalPosition !== "number") {
    throw new BackupError(
      BackupFault.NOT_A_BACKUP,
      `backup ${file} has a manifest this gateway does not know (format ${m?.format})`,
    );
  }
  if (typeof m.schemaVersion === "number" && m.schemaVersion > MIGRATIONS.length) {
    throw new BackupError(
      BackupFault.NOT_A_BACKUP,
      `backup ${file} was written by a newer gateway (database schema ${m.schemaVersion}; this ` +
        `one knows up to ${MIGRATIONS.length} and ${m.gatewayVersion ?? "?"} wrote it): update ` +
        "this gateway first",
    );
  }
  return m as BackupManifest;
}
