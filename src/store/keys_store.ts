/** The account's own OpenPGP key pair(s); the newest one is the one in use. */
import type { Db } from "./db.ts";

export interface StoredKeyPair {
  readonly fingerprint: string;
  /** Armored private key (never logged). */
  readonly privateKey: string;
  /** Binary transferable public key (Autocrypt keydata). */
  readonly publicKey: Uint8Array;
}

/** Reads and writes rows of the `keypairs` table. */
export class KeysStore {
  constructor(private readonly db: Db) {}

  /** The key pair in use, or undefined before key initialisation. */
  current(): StoredKeyPair | undefined {
    const row = this.db.get<{ fingerprint: string; private_key: string; public_key: Uint8Array }>(
      "SELECT fingerprint, private_key, public_key FROM keypairs ORDER BY id DESC LIMIT 1",
    );
    return row && {
      fingerprint: row.fingerprint,
      privateKey: row.private_key,
      publicKey: new Uint8Array(row.public_key),
    };
  }

  add(pair: StoredKeyPair): void {
    this.db.run(
      "INSERT INTO keypairs (fingerprint, private_key, public_key) VALUES (?, ?, ?)",
      pair.fingerprint,
      pair.privateKey,
      pair.publicKey,
    );
  }

  /**
   * Replaces the key material of the key pair in use, when it still is `pair.fingerprint` (a
   * re-signed key keeps its fingerprint): one statement, so a crash leaves the old or the new
   * key, never half of each. False when the key in use is another one.
   */
  replaceCurrent(pair: StoredKeyPair): boolean {
    return this.db.run(
      `UPDATE keypairs SET private_key = ?, public_key = ?
       WHERE id = (SELECT MAX(id) FROM keypairs) AND fingerprint = ?`,
      pair.privateKey,
      pair.publicKey,
      pair.fingerprint,
    ).changes === 1;
  }
}
