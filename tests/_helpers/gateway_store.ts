/**
 * Reads a gateway's own account out of its data directory (read-only `node:sqlite`, so a running
 * daemon is not disturbed; the database is in WAL mode): address, mail password and public key.
 * For tests that must act as the account's mail client (e.g. IMAP APPEND into its INBOX) or
 * sign as it, and to see which mails the reception pipeline recorded as unusable; and, for a
 * stopped gateway only, replaces its key material (to stage a key from an older version).
 */
import { DatabaseSync } from "node:sqlite";
import { DataDirLayout } from "../../src/constants.ts";

/** A gateway's account as stored. */
export interface StoredAccount {
  readonly addr: string;
  readonly password: string;
  /** Primary-key fingerprint, upper-case hex. */
  readonly fingerprint: string;
  /** Binary transferable public key (Autocrypt keydata). */
  readonly publicKey: Uint8Array;
  /** The armored private key. */
  readonly privateKey: string;
}

/** One row of `receive_errors` (without the raw mail). */
export interface StoredReceiveError {
  readonly messageId: string;
  readonly reason: string;
  readonly size: number;
}

function openDb(dataDir: string): DatabaseSync {
  return new DatabaseSync(`${dataDir}/${DataDirLayout.DATABASE}`, { readOnly: true });
}

/** Reads the account of the gateway whose data directory is `dataDir`. */
export function readStoredAccount(dataDir: string): StoredAccount {
  const db = openDb(dataDir);
  try {
    const config = (key: string) => {
      const row = db.prepare("SELECT value FROM config WHERE key = ?").get(key) as
        | { value: string }
        | undefined;
      if (row === undefined) throw new Error(`config key ${key} missing in ${dataDir}`);
      return row.value;
    };
    const key = db.prepare(
      "SELECT fingerprint, public_key, private_key FROM keypairs ORDER BY id DESC LIMIT 1",
    ).get() as { fingerprint: string; public_key: Uint8Array; private_key: string } | undefined;
    if (key === undefined) throw new Error(`no key pair in ${dataDir}`);
    return {
      addr: config("addr"),
      password: config("mail_pw"),
      fingerprint: key.fingerprint,
      publicKey: new Uint8Array(key.public_key),
      privateKey: key.private_key,
    };
  } finally {
    db.close();
  }
}

/** The mails the reception pipeline recorded as unusable, oldest first. */
export function readReceiveErrors(dataDir: string): StoredReceiveError[] {
  const db = openDb(dataDir);
  try {
    return (db.prepare("SELECT message_id, reason, size FROM receive_errors ORDER BY id").all() as {
      message_id: string;
      reason: string;
      size: number;
    }[]).map((r) => ({ messageId: r.message_id, reason: r.reason, size: r.size }));
  } finally {
    db.close();
  }
}

/**
 * Replaces the key material of the key pair in use (same fingerprint) in a STOPPED gateway's
 * data directory, e.g. with the key as an older version made it.
 */
export function replaceStoredKey(
  dataDir: string,
  key: { readonly privateKey: string; readonly publicKey: Uint8Array },
): void {
  const db = new DatabaseSync(`${dataDir}/${DataDirLayout.DATABASE}`);
  try {
    const r = db.prepare(
      "UPDATE keypairs SET private_key = ?, public_key = ? WHERE id = (SELECT MAX(id) FROM keypairs)",
    ).run(key.privateKey, key.publicKey);
    if (r.changes !== 1) throw new Error(`no key pair in ${dataDir}`);
  } finally {
    db.close();
  }
}
