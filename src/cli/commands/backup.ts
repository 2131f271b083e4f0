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
    const file = await ctx.rpc.call("export_backup", [ACCOUNT_ID, path, passphrase(ctx)]);
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
