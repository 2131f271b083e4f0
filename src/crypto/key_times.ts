/**
 * The times a key carries (its packets' and self-signatures' creation times) and the dates to
 * sign and encrypt with, so that neither depends on this device's clock agreeing with them. Pure.
 */
import * as openpgp from "openpgp";

/**
 * The latest creation time in `key`: its primary key, subkeys and the signatures it made on
 * itself (self-certifications, bindings, direct-key signatures). OpenPGP.js refuses to sign with
 * or encrypt to a key at a date before any of these.
 */
export function newestKeyTime(key: openpgp.Key): Date {
  const own = key.getKeyIDs();
  let newest = key.getCreationTime().getTime();
  for (const p of key.toPacketList()) {
    let t: Date | null | undefined;
    if (p instanceof openpgp.SignaturePacket) {
      if (!own.some((id) => id.equals(p.issuerKeyID))) continue; // only what the key said itself
      t = p.created;
    } else if ("created" in p) {
      t = p.created;
    }
    if (t instanceof Date && t.getTime() > newest) newest = t.getTime();
  }
  return new Date(newest);
}

/**
 * The creation time of a signature made now by `key`: `nowMs`, but never before the key or any of
 * its self-signatures was made (a clock set back behind the key's birth still signs, and the
 * receiver sees a signature no older than the key, as OpenPGP requires).
 */
export function signingDate(key: openpgp.Key, nowMs: number): Date {
  return new Date(Math.max(nowMs, newestKeyTime(key).getTime()));
}

/**
 * The date at which `keys` are checked when encrypting to them: `nowMs`, or later when a key was
 * made after it (a peer, or this device, whose clock ran ahead when the key was generated), so a
 * key from "the future" is still a valid recipient.
 */
export function encryptionDate(keys: readonly openpgp.Key[], nowMs: number): Date {
  let date = nowMs;
  for (const k of keys) date = Math.max(date, newestKeyTime(k).getTime());
  return new Date(date);
}
