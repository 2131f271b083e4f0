/**
 * `export_backup` (Delta Chat's name and params): the account into one encrypted file inside the
 * files directory (docs/backup.md). Restoring is not an RPC method: it happens at first start.
 */
import { exportBackup } from "../../backup/export.ts";
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";

/**
 * `export_backup [account_id, dir, passphrase]` → the path of the written file. `dir` is the
 * files directory or a directory inside it; `ImexProgress` events while it runs (1000 done, 0
 * failed) and `ImexFileWritten`. -1 for an empty passphrase, a refused directory, or while
 * another export runs.
 */
export const exportBackupMethod = method({
  name: "export_backup",
  scope: "admin",
  summary: "Writes an encrypted backup of the account into a directory inside the files directory.",
  params: [
    ACCOUNT_PARAM,
    {
      name: "dir",
      type: "string",
      description: "Absolute path of the files directory or a directory inside it.",
    },
    {
      name: "passphrase",
      type: "string",
      description: "Encrypts the backup (Argon2id); needed to restore it.",
    },
  ],
  result: { type: "string", description: "Absolute path of the backup file written." },
  handler: (s, [, dir, passphrase]) =>
    exportBackup(
      { store: s.store, events: s.events, dataDir: s.config.dataDir, filesDir: s.config.filesDir },
      dir,
      passphrase,
    ),
});

/** The backup methods. */
export const BACKUP_METHODS: readonly MethodEntry[] = [exportBackupMethod];
