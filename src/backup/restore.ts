/**
 * Restores a backup into an empty data directory: the header and passphrase are checked first,
 * every entry is written into a temporary directory inside the target and authenticated to the
 * last chunk, and only then renamed into place; on any failure the temporary directory goes and
 * the target is as it was. Used by the daemon at first start and by the CLI offline.
 */
import { DATA_DIR_STATE_ENTRIES, DataDirLayout } from "../constants.ts";
import { describeError } from "../errors.ts";
import { readArchive } from "./archive.ts";
import { BackupError, BackupFault } from "./errors.ts";
import { decodeHeader, HEADER_BYTES } from "./header.ts";
import {
  type BackupManifest,
  MANIFEST_ENTRY,
  parseManifest,
  REQUIRED_ENTRIES,
  restorableEntry,
} from "./manifest.ts";
import { SealedReader } from "./sealed_stream.ts";

/** Prefix of the temporary directory a restore writes into (inside the data directory). */
export const RESTORE_TMP_PREFIX = ".restore-";
/** A file in the restored account naming the backup it came from (its id: the header's salt). */
export const RESTORED_MARK = "accounts/restored-from";

/** Reads the backup's id (hex of its salt) from its header, without the passphrase. */
export async function backupId(file: string): Promise<string> {
  using f = await Deno.open(file, { read: true });
  const bytes = new Uint8Array(HEADER_BYTES);
  let fill = 0;
  while (fill < bytes.length) {
    const n = await f.read(bytes.subarray(fill));
    if (n === null) break;
    fill += n;
  }
  const header = decodeHeader(bytes.subarray(0, fill), file);
  return Array.from(header.salt, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The gateway state entries in `dataDir` (empty when it is missing or holds none). */
export function stateEntries(dataDir: string): string[] {
  const found: string[] = [];
  try {
    for (const e of Deno.readDirSync(dataDir)) {
      if (DATA_DIR_STATE_ENTRIES.has(e.name)) found.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return found.sort();
}

function refuseNotEmpty(dataDir: string, found: readonly string[]): BackupError {
  return new BackupError(
    BackupFault.TARGET_NOT_EMPTY,
    `cannot restore into data directory ${dataDir}: it is not empty (it holds ` +
      `${found.join(", ")}); a backup is restored only into an empty data directory (one holding ` +
      `nothing but the files directory); nothing was written`,
  );
}

/**
 * Restores `file` into `dataDir` with `passphrase`; resolves to the backup's manifest. Throws
 * BackupError (wrong passphrase, truncated, damaged, not a backup, target not empty) or an
 * I/O error; in every case the data directory is left as it was.
 */
export async function restoreBackup(
  file: string,
  dataDir: string,
  passphrase: string,
): Promise<BackupManifest> {
  const found = stateEntries(dataDir);
  if (found.length > 0) throw refuseNotEmpty(dataDir, found);
  using source = await Deno.open(file, { read: true });
  const reader = await SealedReader.open(source, passphrase, file);
  const id = await backupId(file);
  let createdDataDir = false;
  try {
    Deno.statSync(dataDir);
  } catch {
    Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    createdDataDir = true;
  }
  removeStaleRestores(dataDir);
  const tmp = Deno.makeTempDirSync({ dir: dataDir, prefix: RESTORE_TMP_PREFIX });
  let done = false;
  try {
    const manifest = await unpack(reader, file, tmp);
    Deno.mkdirSync(`${tmp}/${DataDirLayout.BLOB_DIR}`, { recursive: true, mode: 0o700 });
    Deno.writeTextFileSync(`${tmp}/${RESTORED_MARK}`, `${id}\n`, { mode: 0o600 });
    const again = stateEntries(dataDir);
    if (again.length > 0) throw refuseNotEmpty(dataDir, again);
    moveInto(tmp, dataDir);
    done = true;
    return manifest;
  } finally {
    Deno.removeSync(tmp, { recursive: true });
    if (!done && createdDataDir) Deno.removeSync(dataDir, { recursive: true });
  }
}

/**
 * Renames the license, then the accounts directory (whose index marks a provisioned data
 * directory) from `tmp` into `dataDir`; puts the license back if the second rename fails.
 */
function moveInto(tmp: string, dataDir: string): void {
  const license = DataDirLayout.LICENSE_FILE;
  const hasLicense = exists(`${tmp}/${license}`);
  if (hasLicense) Deno.renameSync(`${tmp}/${license}`, `${dataDir}/${license}`);
  try {
    Deno.renameSync(
      `${tmp}/${DataDirLayout.ACCOUNTS_DIR}`,
      `${dataDir}/${DataDirLayout.ACCOUNTS_DIR}`,
    );
  } catch (err) {
    if (hasLicense) Deno.renameSync(`${dataDir}/${license}`, `${tmp}/${license}`);
    throw err;
  }
}

/** Removes what a restore left when it was killed (`.restore-*`, never renamed into place). */
function removeStaleRestores(dataDir: string): void {
  for (const e of Deno.readDirSync(dataDir)) {
    if (e.isDirectory && e.name.startsWith(RESTORE_TMP_PREFIX)) {
      Deno.removeSync(`${dataDir}/${e.name}`, { recursive: true });
    }
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes every entry under `tmp`; checks the manifest comes first and nothing is missing. */
async function unpack(reader: SealedReader, file: string, tmp: string): Promise<BackupManifest> {
  let manifest: BackupManifest | undefined;
  const seen = new Set<string>();
  for await (const entry of readArchive(reader.chunks(), file)) {
    if (manifest === undefined) {
      if (entry.name !== MANIFEST_ENTRY || entry.size > 64 * 1024) {
        throw new BackupError(
          BackupFault.DAMAGED,
          `backup ${file} does not start with its manifest`,
        );
      }
      const parts: Uint8Array[] = [];
      for await (const part of entry.content) parts.push(part.slice());
      manifest = parseManifest(concat(parts), file);
      continue;
    }
    if (!restorableEntry(entry.name) || seen.has(entry.name)) {
      throw new BackupError(
        BackupFault.DAMAGED,
        `backup ${file} holds an entry this gateway never writes: ${JSON.stringify(entry.name)}`,
      );
    }
    seen.add(entry.name);
    const path = `${tmp}/${entry.name}`;
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true, mode: 0o700 });
    using out = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
    for await (const part of entry.content) {
      for (let at = 0; at < part.length;) at += await out.write(part.subarray(at));
    }
    await out.sync();
  }
  const missing = REQUIRED_ENTRIES.filter((n) => !seen.has(n));
  if (manifest === undefined || missing.length > 0) {
    throw new BackupError(
      BackupFault.DAMAGED,
      `backup ${file} is incomplete: ${
        manifest === undefined ? MANIFEST_ENTRY : missing.join(", ")
      } missing`,
    );
  }
  return manifest;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), at += p.length);
  return out;
}

/** `describeError` for restore failures, naming the file (used by the daemon and the CLI). */
export function restoreFailure(file: string, dataDir: string, err: unknown): string {
  if (err instanceof BackupError) return err.message;
  if (err instanceof Deno.errors.NotFound) return `backup file ${file} does not exist`;
  return `cannot restore ${file} into ${dataDir}: ${describeError(err)}; nothing was written`;
}
