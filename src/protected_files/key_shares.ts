/**
 * The split content key (docs/prv-format.md, Split key): CEK = S1 xor S2, with a fresh random S1
 * per recipient, so each share alone is uniformly random and says nothing about the CEK.
 */
import { Buffer } from "node:buffer";
import { createHash, createHmac, hkdfSync } from "node:crypto";
import { CEK_SIZE } from "../prv/mod.ts";

/** The two shares of one recipient. */
export interface KeyShares {
  /** Travels to the recipient once, in its `otk_pdu` (stored there). */
  readonly s1: Uint8Array;
  /** Released by the owner only in a time-limited `grant` (held in memory there). */
  readonly s2: Uint8Array;
}

/** Byte-wise xor of two equal-length arrays. */
export function xorBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength !== b.byteLength) {
    throw new RangeError(`key shares differ in length (${a.byteLength} and ${b.byteLength})`);
  }
  const out = new Uint8Array(a.byteLength);
  for (let i = 0; i < a.byteLength; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** A fresh pair of shares of `cek` for one recipient. */
export function splitKey(cek: Uint8Array): KeyShares {
  if (cek.byteLength !== CEK_SIZE) throw new RangeError(`a CEK is ${CEK_SIZE} bytes`);
  const s1 = crypto.getRandomValues(new Uint8Array(CEK_SIZE));
  return { s1, s2: xorBytes(cek, s1) };
}

/** The CEK from a recipient's shares. */
export function joinShares(s1: Uint8Array, s2: Uint8Array): Uint8Array {
  return xorBytes(s1, s2);
}

/** The owner's S2 of a recipient, from the CEK and that recipient's stored S1. */
export function secondShare(cek: Uint8Array, s1: Uint8Array): Uint8Array {
  return xorBytes(cek, s1);
}

/**
 * The v1 device key (builds before the installation identity, docs/identity.md): from the
 * viewer's device fingerprint (SHA-256 of MAC and machine id), so a new MAC lost every stored
 * share. Kept only to recognise and migrate rows wrapped under it.
 */
export function deviceKeyOf(deviceFingerprint: string): Uint8Array {
  return new Uint8Array(
    createHash("sha256").update("edge-gateway prv device v1\n").update(deviceFingerprint).digest(),
  );
}

/**
 * The recipient key (v2): wraps a received file's S1. From the installation secret (in the
 * account database) and the machine id, so a data directory copied to another host derives
 * another key and opens no received file; a new MAC or IP changes nothing.
 */
export function recipientKeyOf(installationSecret: Uint8Array, machineId: string): Uint8Array {
  return new Uint8Array(
    hkdfSync(
      "sha256",
      installationSecret,
      new TextEncoder().encode(machineId),
      "edge-gateway prv recipient v2",
      32,
    ),
  );
}

/**
 * The owner key (v2): wraps the CEK of a file this gateway protected. From the installation
 * secret alone, so sent files stay manageable (grant, revoke, status) wherever the data goes.
 */
export function ownerKeyOf(installationSecret: Uint8Array): Uint8Array {
  return new Uint8Array(
    hkdfSync("sha256", installationSecret, new Uint8Array(0), "edge-gateway prv owner v2", 32),
  );
}

/** The keys stored secrets are wrapped under (key_migration.ts moves v1 rows to them). */
export interface StoredSecretKeys {
  /** Wraps S1 at a recipient (`recipientKeyOf`). */
  readonly recipient: Uint8Array;
  /** Wraps the CEK at the owner (`ownerKeyOf`). */
  readonly owner: Uint8Array;
}

/** The keys of an installation whose secret is `installationSecretHex`, on `machineId`. */
export function storedSecretKeysOf(
  installationSecretHex: string,
  machineId: string,
): StoredSecretKeys {
  if (!/^[0-9a-f]{64}$/.test(installationSecretHex)) {
    throw new RangeError("an installation secret is 64 lower-case hex digits");
  }
  const secret = new Uint8Array(Buffer.from(installationSecretHex, "hex"));
  const keys = { recipient: recipientKeyOf(secret, machineId), owner: ownerKeyOf(secret) };
  secret.fill(0);
  return keys;
}

/** A short public tag of the device key (stored beside wrapped shares, to tell a copy apart). */
export function deviceTagOf(deviceKey: Uint8Array): string {
  return createHmac("sha256", deviceKey).update("tag").digest("hex").slice(0, 16);
}

/**
 * Wraps (or unwraps: xor is its own inverse) a 32-byte secret stored for file `fileUid` under
 * `deviceKey`: S1 at a recipient (recipient key), the CEK at the owner (owner key).
 */
export function deviceWrap(
  deviceKey: Uint8Array,
  label: "s1" | "cek",
  fileUid: string,
  secret: Uint8Array,
): Uint8Array {
  const mask = createHmac("sha256", deviceKey).update(`${label}\n${fileUid}`).digest();
  return xorBytes(secret, new Uint8Array(mask));
}
