/**
 * Step 2 of provisioning: the accounts directory and its index (the one account, id 1), with
 * the start-up errors SPEC §1 names for a foreign or unwritable directory.
 */
import { ACCOUNT_ID, DataDirLayout } from "../constants.ts";
import { StartupError } from "../errors.ts";
import { assertWritable, errText } from "./data_dir.ts";

/** Paths of the one account's files. */
export interface AccountPaths {
  readonly accountsDir: string;
  readonly databasePath: string;
  readonly blobDir: string;
  /** True when the index did not exist before this start. */
  readonly created: boolean;
}

interface AccountsIndex {
  readonly version: 1;
  readonly accounts: readonly { id: number; dir: string }[];
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw new StartupError(`Cannot inspect ${path}: ${errText(err)}`, undefined, { cause: err });
  }
}

function isNonEmptyDir(path: string): boolean {
  try {
    for (const _ of Deno.readDirSync(path)) return true;
    return false;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    if (err instanceof Deno.errors.NotADirectory) return true;
    throw new StartupError(`Cannot inspect ${path}: ${errText(err)}`, undefined, { cause: err });
  }
}

/** Creates (or checks) `<dataDir>/accounts` and its index; returns the account's paths. */
export function prepareAccountsDir(dataDir: string): AccountPaths {
  const accountsDir = `${dataDir}/${DataDirLayout.ACCOUNTS_DIR}`;
  const indexPath = `${dataDir}/${DataDirLayout.ACCOUNTS_INDEX}`;
  const created = !exists(indexPath);
  if (created) {
    const license = exists(`${dataDir}/${DataDirLayout.LICENSE_FILE}`);
    if (license || isNonEmptyDir(accountsDir)) {
      throw new StartupError(
        `accounts directory is not empty: ${dataDir} holds ${
          license ? "license files" : "account files"
        } but no accounts index (${indexPath}); start again from an empty data directory`,
      );
    }
  }
  try {
    Deno.mkdirSync(accountsDir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(accountsDir, 0o700);
  } catch (cause) {
    throw new StartupError(
      `Failed to secure accounts directory ${accountsDir}: ${errText(cause)}`,
      undefined,
      {
        cause,
      },
    );
  }
  assertWritable(accountsDir, `Accounts directory ${accountsDir} is not writable`);
  const accountDir = `${accountsDir}/${ACCOUNT_ID}`;
  const blobDir = `${dataDir}/${DataDirLayout.BLOB_DIR}`;
  Deno.mkdirSync(blobDir, { recursive: true, mode: 0o700 });
  Deno.chmodSync(accountDir, 0o700);
  if (created) writeIndex(indexPath);
  else readIndex(indexPath);
  return {
    accountsDir,
    databasePath: `${dataDir}/${DataDirLayout.DATABASE}`,
    blobDir,
    created,
  };
}

function writeIndex(path: string): void {
  const index: AccountsIndex = {
    version: 1,
    accounts: [{ id: ACCOUNT_ID, dir: String(ACCOUNT_ID) }],
  };
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(index, null, 2) + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, path);
}

function readIndex(path: string): void {
  let index: AccountsIndex;
  try {
    index = JSON.parse(Deno.readTextFileSync(path));
  } catch (cause) {
    throw new StartupError(`accounts index ${path} is unreadable: ${errText(cause)}`, undefined, {
      cause,
    });
  }
  if (!Array.isArray(index.accounts) || !index.accounts.some((a) => a.id === ACCOUNT_ID)) {
    throw new StartupError(`accounts index ${path} does not list account ${ACCOUNT_ID}`);
  }
}
