/**
 * Step 2 of provisioning: the accounts directory and its index (the one account, id 1), with
 * the start-up errors docs/contract.md §1.4 names for a foreign or unwritable directory.
 */
import { ACCOUNT_ID, DataDirLayout } from "../constants.ts";
import { StartupError } from "../errors.ts";
import { assertWritable, errText, securePrivate } from "./data_dir.ts";

/** Paths of the one account's files. */
export interface AccountPaths {
  readonly accountsDir: string;
  readonly indexPath: string;
  readonly databasePath: string;
  readonly blobDir: string;
  /** True when the index did not exist before this start. */
  readonly created: boolean;
}

interface AccountsIndex {
  readonly version: 1;
  readonly accounts: readonly { id: number; dir: string }[];
}

/** Stat that answers undefined for a missing path and a StartupError for anything else. */
function statIfExists(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw new StartupError(`Cannot inspect ${path}: ${errText(err)}`, undefined, { cause: err });
  }
}

/** Up to three entry names of `dir` (none when it is missing). */
function someEntries(dir: string): string[] {
  const names: string[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) {
      names.push(e.name);
      if (names.length === 3) break;
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw new StartupError(`Cannot inspect ${dir}: ${errText(err)}`, undefined, { cause: err });
  }
  return names;
}

function notEmpty(path: string, names: string[]): StartupError {
  return new StartupError(
    `accounts directory is not empty: ${path} holds files (${names.join(", ")})` +
      ` but no accounts index; start again from an empty data directory`,
  );
}

/** Creates a private directory; `what` names it in the error. */
function privateDir(path: string, what: string): void {
  const fail = (cause: unknown) =>
    new StartupError(`Failed to secure ${what} ${path}: ${errText(cause)}`, undefined, { cause });
  try {
    Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw fail(cause);
  }
  securePrivate(path, 0o700, fail);
}

/** Creates (or checks) `<dataDir>/accounts` and its index; returns the account's paths. */
export function prepareAccountsDir(dataDir: string): AccountPaths {
  const accountsDir = `${dataDir}/${DataDirLayout.ACCOUNTS_DIR}`;
  const indexPath = `${dataDir}/${DataDirLayout.ACCOUNTS_INDEX}`;
  const dirInfo = statIfExists(accountsDir);
  if (dirInfo !== undefined && !dirInfo.isDirectory) {
    throw new StartupError(`Accounts directory ${accountsDir} is not a directory`);
  }
  const created = statIfExists(indexPath) === undefined;
  if (created) {
    const licenses = [DataDirLayout.LICENSE_FILE, DataDirLayout.LEGACY_LICENSE_FILE]
      .filter((name) => statIfExists(`${dataDir}/${name}`) !== undefined);
    if (licenses.length > 0) throw notEmpty(dataDir, licenses);
    const foreign = someEntries(accountsDir);
    if (foreign.length > 0) throw notEmpty(accountsDir, foreign);
  }
  privateDir(accountsDir, "accounts directory");
  assertWritable(accountsDir, `Accounts directory ${accountsDir} is not writable`);
  // The index first: a crash after it leaves a directory the next start accepts.
  if (created) writeIndex(indexPath);
  else readIndex(indexPath);
  privateDir(`${accountsDir}/${ACCOUNT_ID}`, "account directory");
  const blobDir = `${dataDir}/${DataDirLayout.BLOB_DIR}`;
  privateDir(blobDir, "blob directory");
  const databasePath = `${dataDir}/${DataDirLayout.DATABASE}`;
  privateFile(databasePath);
  return { accountsDir, indexPath, databasePath, blobDir, created };
}

/**
 * Creates `path` empty with mode 0600 if missing (SQLite then gives its -wal/-shm files the same
 * mode) and tightens the mode of an existing file.
 */
function privateFile(path: string): void {
  try {
    Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 }).close();
    securePrivate(path, 0o600, (cause) => cause as Error);
  } catch (cause) {
    throw new StartupError(
      `Cannot create the account database ${path}: ${errText(cause)}`,
      undefined,
      {
        cause,
      },
    );
  }
}

function writeIndex(path: string): void {
  const index: AccountsIndex = {
    version: 1,
    accounts: [{ id: ACCOUNT_ID, dir: String(ACCOUNT_ID) }],
  };
  const tmp = `${path}.tmp`;
  try {
    Deno.writeTextFileSync(tmp, JSON.stringify(index, null, 2) + "\n", { mode: 0o600 });
    Deno.renameSync(tmp, path);
  } catch (cause) {
    throw new StartupError(
      `Cannot write the accounts index ${path}: ${errText(cause)}`,
      undefined,
      {
        cause,
      },
    );
  }
}

function readIndex(path: string): void {
  let index: Partial<AccountsIndex>;
  try {
    index = JSON.parse(Deno.readTextFileSync(path));
  } catch (cause) {
    throw new StartupError(`accounts index ${path} is unreadable: ${errText(cause)}`, undefined, {
      cause,
    });
  }
  if (!Array.isArray(index?.accounts) || !index.accounts.some((a) => a?.id === ACCOUNT_ID)) {
    throw new StartupError(
      `accounts index ${path} does not list account ${ACCOUNT_ID}; start again from an empty data directory`,
    );
  }
}
