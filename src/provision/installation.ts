/**
 * The installation identity at start (docs/identity.md): the installation id and secret from the
 * account database, the machine id, a move to another machine noticed and recorded, and the
 * stored protected-file secrets moved to the installation's keys.
 */
import { logger } from "../log.ts";
import type { InstallationMove } from "../license/status.ts";
import { migrateStoredSecrets } from "../protected_files/key_migration.ts";
import {
  deviceKeyOf,
  type StoredSecretKeys,
  storedSecretKeysOf,
} from "../protected_files/key_shares.ts";
import { ConfigKey, type Store } from "../store/mod.ts";

const log = logger("identity");

/** This installation as the start found it. */
export interface Installation {
  /** 32 hex digits, from the account database (migration 15). */
  readonly installationId: string;
  /** `/etc/machine-id`, else `<dataDir>/machine-id`. */
  readonly machineId: string;
  /** What stored protected-file secrets are wrapped under. */
  readonly keys: StoredSecretKeys;
  /** Set when the machine id differs from the last start's and no license was bound since. */
  readonly moved?: InstallationMove;
}

/** The device as `storeDeviceFingerprint` found it (only the fields used). */
export interface DeviceInputs {
  readonly fingerprint: string;
  readonly machineId: string;
}

/**
 * Reads the installation identity, records a move (a machine id other than the last start's:
 * the data directory runs on another host, or a backup was restored there) and migrates the
 * stored secrets. Logs one line when something changed, none otherwise.
 */
export async function openInstallation(
  store: Store,
  device: DeviceInputs,
  blobDir: string,
  now: number,
): Promise<Installation> {
  const installationId = store.config.get(ConfigKey.INSTALLATION_ID);
  const secret = store.config.get(ConfigKey.INSTALLATION_SECRET);
  if (installationId === undefined || secret === undefined) {
    throw new Error("the account database has no installation identity (migration 15)");
  }
  const last = store.config.get(ConfigKey.MACHINE_ID_LAST_SEEN);
  if (last !== undefined && last !== device.machineId) {
    const move: InstallationMove = { from: last, to: device.machineId, at: now };
    store.config.set(ConfigKey.INSTALLATION_MOVED, JSON.stringify(move));
    log.warn(
      "this installation moved to another machine (the machine id differs from the last " +
        "start): run license activate <url> to re-bind the license; received protected files " +
        "ask their owners again",
      { installation_id: installationId },
    );
  }
  if (last !== device.machineId) store.config.set(ConfigKey.MACHINE_ID_LAST_SEEN, device.machineId);
  const keys = storedSecretKeysOf(secret, device.machineId);
  const result = await migrateStoredSecrets({
    store: store.protectedFiles,
    keys,
    v1Key: deviceKeyOf(device.fingerprint),
    prvCandidates: (sent) => [sent.path, `${blobDir}/${sent.prvSha256.slice(0, 32)}.prv`],
  });
  if (result.migrated > 0 || result.reRequested > 0) {
    log.info("protected-file keys moved to this installation's keys", {
      migrated: result.migrated,
      asked_again: result.reRequested,
    });
  }
  if (result.unusableSent > 0) {
    log.warn(
      "some sent protected files hold a key wrapped on another device by an earlier build; " +
        "they can be revoked, but no key share is given for them",
      { files: result.unusableSent },
    );
  }
  const moved = movedOf(store.config.get(ConfigKey.INSTALLATION_MOVED));
  return { installationId, machineId: device.machineId, keys, ...(moved ? { moved } : {}) };
}

function movedOf(raw: string | undefined): InstallationMove | undefined {
  if (raw === undefined || raw === "") return undefined;
  try {
    return JSON.parse(raw) as InstallationMove;
  } catch {
    return undefined;
  }
}
