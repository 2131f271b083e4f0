/**
 * The key's relay list as Delta Chat writes it: one direct-key signature by the primary key with
 * the notation `relays@chatmail.at` = the owner's relay addresses, comma-separated. Pure.
 */
import * as openpgp from "openpgp";
import { KeyNotation, MAX_KEY_RELAYS } from "../protocol.ts";

/**
 * `SignaturePacket.sign` as OpenPGP.js 6 implements it: its type declarations omit the config
 * (without which a v4 signature throws) and type the signed data as bytes, while a direct-key
 * signature signs `{ key }`.
 */
type SignKey = (
  key: openpgp.SecretKeyPacket,
  data: { key: openpgp.SecretKeyPacket },
  date: Date,
  detached: boolean,
  config: openpgp.Config,
) => Promise<void>;

/** A direct-key signature: a signature packet after the primary key, before any user ID. */
export function directSignatures(key: openpgp.Key): openpgp.SignaturePacket[] {
  const out: openpgp.SignaturePacket[] = [];
  for (const p of key.toPacketList().slice(1)) {
    if (!(p instanceof openpgp.SignaturePacket)) break;
    if (p.signatureType === openpgp.enums.signature.key) out.push(p);
  }
  return out;
}

/** Roughly an address, as Delta Chat filters the notation's entries (no space, comma or 2nd @). */
const RELAY_ADDR = /^[^\s,@]+@[^\s,@]+$/;

/**
 * The notation's addresses as Delta Chat reads them: split at commas, kept byte for byte (it
 * compares them with the invite's exactly), what is no address dropped, at most the first
 * {@link MAX_KEY_RELAYS}.
 */
function parseRelays(value: Uint8Array): string[] {
  return new TextDecoder().decode(value).split(",").filter((a) => RELAY_ADDR.test(a))
    .slice(0, MAX_KEY_RELAYS);
}

/**
 * The relay addresses of `key`'s newest valid direct-key signature with the notation; undefined
 * when it has none (a key made before the notation, or by another client).
 */
export async function keyRelays(key: openpgp.Key): Promise<string[] | undefined> {
  const valid: { created: number; relays: string[] }[] = [];
  for (const sig of directSignatures(key)) {
    const notation = sig.rawNotations.find((n) => n.name === KeyNotation.RELAYS);
    if (notation === undefined) continue;
    try {
      // No date: a notation signed while this device's clock ran ahead still counts.
      await sig.verify(
        key.keyPacket,
        openpgp.enums.signature.key,
        { key: key.keyPacket },
        null as unknown as Date,
      );
    } catch {
      continue; // not made by this key: never trusted
    }
    valid.push({ created: sig.created?.getTime() ?? 0, relays: parseRelays(notation.value) });
  }
  return valid.sort((a, b) => b.created - a.created)[0]?.relays;
}

/**
 * A copy of `key` whose one direct-key signature lists `relays` (replacing any earlier one, as
 * Delta Chat keeps only the newest), signed by its primary key at `date` (never before the key
 * was made). Throws on an empty list, more than {@link MAX_KEY_RELAYS}, or what is no address.
 */
export async function withKeyRelays(
  key: openpgp.PrivateKey,
  relays: readonly string[],
  date = new Date(),
): Promise<openpgp.PrivateKey> {
  if (relays.length === 0 || relays.length > MAX_KEY_RELAYS) {
    throw new Error(`a key lists 1 to ${MAX_KEY_RELAYS} relay addresses, not ${relays.length}`);
  }
  const bad = relays.find((a) => !RELAY_ADDR.test(a));
  if (bad !== undefined) throw new Error(`not a relay address: "${bad}"`);
  const primary = key.keyPacket;
  if (!(primary instanceof openpgp.SecretKeyPacket) || !primary.isDecrypted()) {
    throw new Error("the primary key's secret is not available to sign with");
  }
  const sig = new openpgp.SignaturePacket();
  sig.signatureType = openpgp.enums.signature.key;
  sig.publicKeyAlgorithm = primary.algorithm;
  sig.hashAlgorithm = openpgp.enums.hash.sha256;
  sig.rawNotations = [{
    name: KeyNotation.RELAYS,
    value: new TextEncoder().encode(relays.join(",")),
    humanReadable: true,
    critical: false,
  }];
  const created = new Date(Math.max(date.getTime(), key.getCreationTime().getTime()));
  await (sig.sign as unknown as SignKey).call(sig, primary, { key: primary }, created, false, {
    ...openpgp.config,
  });

  const packets = key.toPacketList();
  const out = new openpgp.PacketList<openpgp.AnyPacket>();
  out.push(packets[0]);
  let i = 1;
  for (; i < packets.length && packets[i] instanceof openpgp.SignaturePacket; i++) {
    const p = packets[i] as openpgp.SignaturePacket;
    if (p.signatureType !== openpgp.enums.signature.key) out.push(p); // revocations stay
  }
  out.push(sig, ...packets.slice(i));
  return new openpgp.PrivateKey(out);
}
