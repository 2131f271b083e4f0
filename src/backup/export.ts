/**
 * `export_backup`: one encrypted file in a directory inside the files directory, holding the
 * account database (a snapshot taken while the daemon runs), the accounts index, the license and
 * the blobs, streamed; `ImexProgress` while it runs. One export per account database at a time.
 */
import { ACCOUNT_ID, DataDirLayout, GATEWAY_VERSION } from "../constants.ts";
import { isBlobName } from "../core/blobs.ts";
import { resolveOutputDir } from "../core/output_dir.ts";
import { describeError, GatewayError } from "../errors.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { exposedFullGc } from "../memory/burst_gc.ts";
import { ConfigKey, snapshotDatabase, type Store } from "../store/mod.ts";
import { ArchiveWriter } from "./archive.ts";
import { BackupError, BackupFault } from "./errors.ts";
import type { KdfParams } from "./kdf.ts";
import { type BackupManifest, MANIFEST_ENTRY } from "./manifest.ts";
import { SealedWriter } from "./sealed_stream.ts";

const log = logger("backup");

/** The method name, for messages. */
const METHOD = "export_backup";

/** What an export reads and where it reports. */
export interface BackupExportDeps {
  readonly store: Store;
  readonly events: EventSink;
  readonly dataDir: string;
  readonly filesDir: string;
  /** Wall clock in ms (file name, manifest). */
  readonly clock?: () => number;
  /** Argon2id cost (tests lower it; default `DEFAULT_KDF`). */
  readonly kdf?: KdfParams;
  /** Plaintext bytes per chunk (default 64 KiB). */
  readonly chunkBytes?: number;
}

/** Stores with an export running: a second one is refused. */
const running = new WeakSet<Store>();

/** One file to copy in: its entry name, path and size when listed. */
interface Part {
  readonly entry: string;
  readonly path: string;
  readonly size: number;
}

/** `edge-backup-2026-11-28-185600.bak` in UTC, with `-2`, `-3`… when the name is taken. */
async function freeName(dir: string, now: number): Promise<string> {
  const stamp = new Date(now).toISOString().slice(0, 19).replace("T", "-").replaceAll(":", "");
  for (let n = 1;; n++) {
    const name = `edge-backup-${stamp}${n === 1 ? "" : `-${n}`}.bak`;
    try {
      await Deno.lstat(`${dir}/${name}`);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return `${dir}/${name}`;
      throw err;
    }
  }
}

/** Reports progress as permille of the bytes copied, at most once per 1 %. */
class Progress {
  #done = 0;
  #last = 0;
  constructor(private readonly events: EventSink, private readonly total: number) {}

  emit(progress: number): void {
    this.events.publish({ kind: "ImexProgress", progress });
  }

  add(bytes: number): void {
    this.#done += bytes;
    const p = 10 + Math.floor(980 * Math.min(1, this.#done / Math.max(1, this.total)));
    if (p - this.#last >= 10) {
      this.#last = p;
      this.emit(p);
    }
  }
}

/** The blobs of the account (content-addressed names only; temp files are left out). */
async function listBlobs(dataDir: string): Promise<Part[]> {
  const dir = `${dataDir}/${DataDirLayout.BLOB_DIR}`;
  const parts: Part[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.isFile || !isBlobName(e.name)) continue;
    const path = `${dir}/${e.name}`;
    const info = await Deno.stat(path).catch(() => undefined);
    if (info !== undefined) {
      parts.push({ entry: `${DataDirLayout.BLOB_DIR}/${e.name}`, path, size: info.size });
    }
  }
  return parts.sort((a, b) => a.entry < b.entry ? -1 : 1);
}

/** A file's size, or undefined when it does not exist. */
async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await Deno.stat(path)).size;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/**
 * Writes a backup of the account into `dir` (absolute, at or inside the files directory) and
 * resolves to the file's path. `ImexProgress` 10..990 while it runs, 1000 when the file is in
 * place (after `ImexFileWritten`), 0 when it failed. -1 when another export runs, the directory
 * is refused, or the passphrase is empty.
 */
export async function exportBackup(
  deps: BackupExportDeps,
  dir: string,
  passphrase: string,
): Promise<string> {
  if (passphrase === "") {
    throw new GatewayError(`${METHOD}: the passphrase is empty; give one to encrypt the backup`);
  }
  if (running.has(deps.store)) {
    throw new BackupError(
      BackupFault.BUSY,
      `${METHOD}: a backup export is already running; wait for its ImexProgress 1000 or 0`,
    );
  }
  running.add(deps.store);
  const clock = deps.clock ?? Date.now;
  const accountDir = `${deps.dataDir}/${DataDirLayout.ACCOUNTS_DIR}/${ACCOUNT_ID}`;
  await removeStaleSnapshots(accountDir);
  const snapshot = `${accountDir}/${SNAPSHOT_PREFIX}${crypto.randomUUID()}.db`;
  let partial: string | undefined;
  try {
    const outDir = await resolveOutputDir(dir, deps, { method: METHOD, verb: "written to" });
    deps.events.publish({ kind: "ImexProgress", progress: 10 });
    const createdAt = clock();
    const facts = await snapshotDatabase(`${deps.dataDir}/${DataDirLayout.DATABASE}`, snapshot);
    const blobs = await listBlobs(deps.dataDir);
    const parts: Part[] = [
      { entry: DataDirLayout.DATABASE, path: snapshot, size: (await sizeOf(snapshot)) ?? 0 },
      ...blobs,
    ];
    const indexPath = `${deps.dataDir}/${DataDirLayout.ACCOUNTS_INDEX}`;
    const index = await Deno.readFile(indexPath);
    const licensePath = `${deps.dataDir}/${DataDirLayout.LICENSE_FILE}`;
    const license = (await sizeOf(licensePath)) === undefined
      ? undefined
      : await Deno.readFile(licensePath);
    const manifest: BackupManifest = {
      format: 1,
      createdAt,
      addr: deps.store.config.get(ConfigKey.ADDR) ?? "",
      gatewayVersion: GATEWAY_VERSION,
      schemaVersion: facts.schemaVersion,
      journalPosition: facts.journalPosition,
      blobs: blobs.length,
    };
    const target = await freeName(outDir, createdAt);
    partial = `${target}.part`;
    using out = await Deno.open(partial, { write: true, createNew: true, mode: 0o600 });
    const progress = new Progress(deps.events, parts.reduce((n, p) => n + p.size, 0));
    const sealed = await SealedWriter.create(
      { write: async (bytes) => void await writeAll(out, bytes) },
      passphrase,
      {
        ...(deps.kdf === undefined ? {} : { kdf: deps.kdf }),
        ...(deps.chunkBytes === undefined ? {} : { chunkBytes: deps.chunkBytes }),
      },
    );
    const archive = new ArchiveWriter(sealed, (n) => progress.add(n));
    await archive.addBytes(MANIFEST_ENTRY, new TextEncoder().encode(JSON.stringify(manifest)));
    await archive.addBytes(DataDirLayout.ACCOUNTS_INDEX, index);
    if (license !== undefined) await archive.addBytes(DataDirLayout.LICENSE_FILE, license);
    for (const part of parts) await copyIn(archive, part);
    await archive.finish();
    await sealed.close();
    await out.sync();
    await Deno.rename(partial, target);
    partial = undefined;
    log.info("backup written", { path: target, blobs: blobs.length });
    deps.events.publish({ kind: "ImexFileWritten", path: target });
    deps.events.publish({ kind: "ImexProgress", progress: 1000 });
    return target;
  } catch (err) {
    deps.events.publish({ kind: "ImexProgress", progress: 0 });
    log.warn("backup export failed", { error: describeError(err) });
    if (err instanceof GatewayError) throw err;
    throw new GatewayError(`${METHOD}: cannot write the backup: ${describeError(err)}`, undefined, {
      cause: err,
    });
  } finally {
    if (partial !== undefined) await Deno.remove(partial).catch(() => {});
    await Deno.remove(snapshot).catch(() => {});
    running.delete(deps.store);
    // Argon2id's 64 MiB and the chunks' buffers are garbage now: give the memory back at once.
    exposedFullGc()?.();
  }
}

/** Name prefix of the database snapshot an export takes (in the account directory). */
const SNAPSHOT_PREFIX = ".backup-snapshot-";

/** Removes snapshots an export left when the daemon died during it (none runs now). */
async function removeStaleSnapshots(accountDir: string): Promise<void> {
  try {
    for await (const e of Deno.readDir(accountDir)) {
      if (e.isFile && e.name.startsWith(SNAPSHOT_PREFIX)) {
        await Deno.remove(`${accountDir}/${e.name}`).catch(() => {});
      }
    }
  } catch { /* no account directory: the export fails on its database below */ }
}

/** Copies one file in; a blob deleted since it was listed is left out. */
async function copyIn(archive: ArchiveWriter, part: Part): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(part.path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound && part.entry !== DataDirLayout.DATABASE) return;
    throw err;
  }
  using _ = file;
  await archive.addStream(part.entry, part.size, file);
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await file.write(bytes.subarray(at));
}
