/**
 * Moves stored protected-file secrets to the installation's keys at start (docs/identity.md):
 * v1 rows wrapped under this device's v1 key are re-wrapped, and received rows bound to another
 * host are reset so that opening them asks the owner again.
 */
import type { ProtectedFilesStore } from "../store/protected_files_store.ts";
import { openPrvFile } from "../prv/mod.ts";
import { deviceTagOf, deviceWrap, type StoredSecretKeys } from "./key_shares.ts";

/** What the migration needs. */
export interface KeyMigrationInput {
  readonly store: Pick<
    ProtectedFilesStore,
    "sentKeys" | "setSentKey" | "receivedKeys" | "setReceivedKey"
  >;
  /** The installation's keys (key_shares.ts). */
  readonly keys: StoredSecretKeys;
  /** This device's v1 key (`deviceKeyOf` of the current device fingerprint). */
  readonly v1Key: Uint8Array;
  /**
   * Where a sent file's `.prv` may be found to check a v1 CEK against it (its encrypted path,
   * then its copies in the blob directory); an absent file is skipped.
   */
  readonly prvCandidates: (sent: { path: string; prvSha256: string }) => string[];
}

/** Counts of what the migration did. */
export interface KeyMigrationResult {
  /** Rows re-wrapped from the v1 key (S1 and CEKs). */
  readonly migrated: number;
  /** Received rows whose S1 this host cannot unwrap: reset, their owners are asked again. */
  readonly reRequested: number;
  /** Sent rows whose CEK could not be shown to be this device's: kept, never unwrapped. */
  readonly unusableSent: number;
}

const isZero = (b: Uint8Array) => b.every((x) => x === 0);

/** True when `cek` opens one of the `.prv` files at `paths` (its header authenticates). */
async function opensPrv(paths: readonly string[], cek: Uint8Array): Promise<boolean> {
  for (const path of paths) {
    try {
      const reader = await openPrvFile(path, cek);
      reader.close();
      return true;
    } catch {
      // absent, unreadable, or another key: try the next copy
    }
  }
  return false;
}

/**
 * Re-wraps every row the current keys cannot open yet: received S1 under the v1 device tag of
 * this device, sent CEKs that open their `.prv` under the v1 device key. A received row tagged
 * for another device loses its S1 (it could only be garbage here) and takes this host's tag, so
 * its state is `requested` and opening it asks the owner for its share again.
 */
export async function migrateStoredSecrets(i: KeyMigrationInput): Promise<KeyMigrationResult> {
  const recipientTag = deviceTagOf(i.keys.recipient);
  const ownerTag = deviceTagOf(i.keys.owner);
  const v1Tag = deviceTagOf(i.v1Key);
  let migrated = 0;
  let reRequested = 0;
  let unusableSent = 0;
  for (const rec of i.store.receivedKeys()) {
    if (rec.deviceTag === recipientTag) continue;
    if (rec.deviceTag === v1Tag) {
      const s1 = isZero(rec.s1) ? rec.s1 : deviceWrap(i.v1Key, "s1", rec.fileUid, rec.s1);
      const wrapped = isZero(s1) ? s1 : deviceWrap(i.keys.recipient, "s1", rec.fileUid, s1);
      i.store.setReceivedKey(rec.id, wrapped, recipientTag);
      s1.fill(0);
      migrated++;
      continue;
    }
    i.store.setReceivedKey(rec.id, new Uint8Array(32), recipientTag);
    reRequested++;
  }
  for (const sent of i.store.sentKeys()) {
    if (sent.keyTag === ownerTag) continue;
    if (sent.keyTag !== "") {
      unusableSent++; // wrapped under another installation's owner key: not ours to unwrap
      continue;
    }
    const cek = deviceWrap(i.v1Key, "cek", sent.fileUid, sent.cek);
    if (await opensPrv(i.prvCandidates(sent), cek)) {
      i.store.setSentKey(sent.id, deviceWrap(i.keys.owner, "cek", sent.fileUid, cek), ownerTag);
      migrated++;
    } else {
      unusableSent++;
    }
    cek.fill(0);
  }
  return { migrated, reRequested, unusableSent };
}
