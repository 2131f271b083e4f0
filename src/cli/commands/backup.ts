/**
 * `backup export <dir>`: the daemon writes an encrypted backup into a directory inside its files
 * directory (`export_backup`); `backup import <file> --data-dir D`: restores one offline into
 * the empty data directory D, as the daemon's `--import-backup` does. The passphrase comes from
 * EDGE_BACKUP_PASSPHRASE (or PRIVITTY_BACKUP_PASSPHRASE), never from the command line.
 */
import { restoreBackup, restoreFailure } from "../../backup/restore.ts";
import { ACCOUNT_ID } from "../../constants.ts";
import { UsageError } from "../args.ts";
import { type Command, type CommandContext, type CommandForm, stringOption } from "../command.ts";
import { CliFailure } from "../offline_license.ts";
import { RpcError } from "../rpc_client.ts";
import { followEvents, type SseMessage } from "../sse_client.ts";

const PASSPHRASE_ENV = "EDGE_BACKUP_PASSPHRASE";
const PASSPHRASE_TWIN = "PRIVITTY_BACKUP_PASSPHRASE";

const FORMS: readonly CommandForm[] = [
  {
    usage: "backup export <dir>",
    http: 'POST /rpc export_backup [1,"<dir>","<passphrase>"]',
    summary: "write an encrypted backup into <dir> (the files directory or inside it); " +
      "prints the file's path",
  },
  {
    usage: "backup import <file> --data-dir D",
    http: "POST /rpc export_backup wrote <file> (restored locally with the daemon stopped, " +
      "as serve --import-backup <file>; no request)",
    summary: "restore <file> into the empty data directory D",
  },
];

function passphrase(ctx: CommandContext): string {
  const value = ctx.env(PASSPHRASE_ENV) || ctx.env(PASSPHRASE_TWIN);
  if (!value) {
    throw new UsageError(
      `set the backup's passphrase in ${PASSPHRASE_ENV} (or ${PASSPHRASE_TWIN}); it is never ` +
        "given on the command line",
      "backup",
    );
  }
  return value;
}

async function run(ctx: CommandContext): Promise<number> {
  const [action, path] = ctx.positionals;
  if (ctx.positionals.length !== 2 || (action !== "export" && action !== "import")) {
    throw new UsageError(
      "expected 'backup export <dir>' or 'backup import <file> --data-dir D'",
      "backup",
    );
  }
  if (action === "export") {
    const file = await exportWatching(ctx, path, passphrase(ctx));
    await ctx.out.result(file, (v) => ctx.out.value(v));
    return 0;
  }
  const dataDir = stringOption(ctx, "data-dir") ?? ctx.accounts;
  if (dataDir === undefined) {
    throw new UsageError("backup import needs --data-dir D (the empty data directory)", "backup");
  }
  if (!path.startsWith("/") || !dataDir.startsWith("/")) {
    throw new UsageError("backup import needs absolute paths for <file> and --data-dir", "backup");
  }
  const pass = passphrase(ctx);
  try {
    const manifest = await restoreBackup(path, dataDir, pass);
    const summary = {
      data_dir: dataDir,
      addr: manifest.addr,
      blobs: manifest.blobs,
      taken_at: new Date(manifest.createdAt).toISOString(),
    };
    await ctx.out.result(summary, () =>
      ctx.out.line(
        `restored ${manifest.addr} (${manifest.blobs} files, taken ${summary.taken_at}) into ` +
          `${dataDir}; start the daemon with --data-dir ${dataDir}`,
      ));
    return 0;
  } catch (err) {
    throw new CliFailure(restoreFailure(path, dataDir, err));
  }
}

/** What the event stream said about the export: its file, and 1000 (done) or 0 (failed). */
interface Watched {
  file?: string;
  end?: number;
}

/**
 * Calls `export_backup` while following `/events`: the server closes a request after 30 s
 * (docs/methods.md#http-limits) while a large export goes on, so when the call's answer is lost
 * the outcome is taken from `ImexFileWritten` and `ImexProgress` 1000 (or 0) instead.
 */
async function exportWatching(ctx: CommandContext, dir: string, pass: string): Promise<unknown> {
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, ...(ctx.signal ? [ctx.signal] : [])]);
  const watched: Watched = {};
  let settle: () => void = () => {};
  const ended = new Promise<void>((r) => settle = r);
  let connected: () => void = () => {};
  const ready = new Promise<void>((r) => connected = r);
  const follow = followEvents({
    http: { ...ctx.http, signal, timeoutMs: undefined },
    onEvent: (message: SseMessage) => {
      const event = parseEvent(message);
      if (event?.type === "ImexFileWritten" && typeof event.path === "string") {
        watched.file = event.path;
      }
      if (event?.type === "ImexProgress" && (event.progress === 1000 || event.progress === 0)) {
        watched.end = event.progress;
        settle();
      }
      return Promise.resolve();
    },
    onNotice: () => Promise.resolve(),
    onConnected: () => Promise.resolve(connected()),
  }).catch(() => connected()); // no event stream: the call's answer alone decides
  try {
    await ready;
    try {
      return await ctx.rpc.call("export_backup", [ACCOUNT_ID, dir, pass]);
    } catch (err) {
      if (err instanceof RpcError || ctx.signal?.aborted) throw err;
      await ctx.out.error(
        "edge-gateway: backup: the answer was lost (the export goes on in the gateway); " +
          "waiting for its ImexProgress on /events",
      );
      let timer: ReturnType<typeof setTimeout> | undefined;
      const limit = new Promise<void>((r) =>
        timer = setTimeout(r, ctx.http.timeoutMs || 1_800_000)
      );
      await Promise.race([ended, follow, limit]);
      clearTimeout(timer);
      if (watched.end === 1000 && watched.file !== undefined) return watched.file;
      if (watched.end === 0) {
        throw new CliFailure("export_backup failed (ImexProgress 0); the gateway's log says why");
      }
      throw err;
    }
  } finally {
    stop.abort();
    await follow;
  }
}

function parseEvent(message: SseMessage): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(message.data);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The `backup` command. */
export const backup: Command = {
  name: "backup",
  usage: "backup export <dir> | backup import <file> --data-dir D",
  summary: "export an encrypted backup, or restore one into an empty data directory",
  http: 'POST /rpc export_backup [1,"<dir>","<passphrase>"] (import: no request, offline)',
  details: "The passphrase is read from EDGE_BACKUP_PASSPHRASE (or PRIVITTY_BACKUP_PASSPHRASE). " +
    "export: <dir> is the daemon's files directory or a directory inside it. import: with the " +
    "daemon stopped; D must hold no gateway state; on any error nothing is written " +
    "(docs/backup.md).",
  options: [{
    name: "data-dir",
    kind: "string",
    value: "D",
    help: "backup import: the data directory to restore into (empty)",
  }],
  args: { min: 2, max: 2 },
  defaultTimeoutMs: 30 * 60_000,
  forms: FORMS,
  run,
};
