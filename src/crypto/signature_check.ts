/**
 * Checks OpenPGP data signatures without a clock: a cryptographically valid signature by a key
 * that is correctly bound, unrevoked and allowed to sign verifies whatever creation time the
 * signature or the key claims (devices' clocks differ; the receive time is what counts). Pure.
 */
import * as openpgp from "openpgp";

/** Why no signature verified. */
export const SignatureFailure = {
  /** The data carries no signature at all. */
  UNSIGNED: "unsigned",
  /** Signed, but by none of the keys offered (another key, or one we do not have yet). */
  UNKNOWN_SIGNER: "unknown_signer",
  /** Signed by one of the keys offered, but the signature or that key does not check out. */
  INVALID: "invalid",
} as const;
export type SignatureFailure = typeof SignatureFailure[keyof typeof SignatureFailure];

/** The outcome of {@link checkSignatures}. */
export type SignatureCheck =
  | { readonly valid: true; readonly signerFingerprint: string }
  | { readonly valid: false; readonly failure: SignatureFailure; readonly detail: string };

const DATA_SIGNATURES: readonly number[] = [
  openpgp.enums.signature.binary,
  openpgp.enums.signature.text,
];

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The first of `signatures` over `literal` that a key of `keys` made, as the upper-case primary
 * fingerprint of that key; otherwise why none verified (`invalid` wins over `unknown_signer`,
 * which wins over `unsigned`). `detached`: the signatures travel apart from the data.
 */
export async function checkSignatures(
  signatures: readonly openpgp.SignaturePacket[],
  literal: openpgp.LiteralDataPacket,
  keys: readonly openpgp.PublicKey[],
  detached = false,
): Promise<SignatureCheck> {
  if (signatures.length === 0) {
    return { valid: false, failure: SignatureFailure.UNSIGNED, detail: "no signature" };
  }
  let invalid: string | undefined;
  const issuers: string[] = [];
  for (const sig of signatures) {
    issuers.push(sig.issuerKeyID.toHex().toUpperCase());
    const key = keys.find((k) => k.getKeys(sig.issuerKeyID).length > 0);
    if (key === undefined) continue;
    try {
      if (!DATA_SIGNATURES.includes(sig.signatureType ?? -1)) {
        throw new Error(`signature type ${sig.signatureType} does not sign data`);
      }
      // `null`: no date checks. Revocations, the binding signatures and key flags still count.
      const signing = await key.getSigningKey(sig.issuerKeyID, null);
      await sig.verify(
        signing.keyPacket,
        sig.signatureType!,
        literal,
        null as unknown as Date,
        detached,
      );
      return { valid: true, signerFingerprint: key.getFingerprint().toUpperCase() };
    } catch (err) {
      invalid ??= `signature by ${sig.issuerKeyID.toHex().toUpperCase()}: ${message(err)}`;
    }
  }
  if (invalid !== undefined) {
    return { valid: false, failure: SignatureFailure.INVALID, detail: invalid };
  }
  return {
    valid: false,
    failure: SignatureFailure.UNKNOWN_SIGNER,
    detail: `signed by key ${issuers.join(", ")}, which is not among the keys offered`,
  };
}

/** A packet list's `stream` when OpenPGP.js parsed the packets after the literal data into it. */
interface ParsedPacketStream {
  readToEnd(join: (items: unknown[]) => unknown[]): Promise<unknown[]>;
}

/**
 * The packets OpenPGP.js parsed but keeps in the list's `stream` (after a one-pass signature's
 * literal data: its signatures), read to the end; none when there is no such stream.
 */
async function trailingPackets(list: openpgp.PacketList<openpgp.AnyPacket>): Promise<unknown[]> {
  const stream = (list as { stream?: unknown }).stream;
  if (
    !Array.isArray(stream) || typeof (stream as { readToEnd?: unknown }).readToEnd !== "function"
  ) {
    return [];
  }
  return await (stream as unknown as ParsedPacketStream).readToEnd((items) => items);
}

/**
 * The signature packets and the literal data of a (decrypted) message, once: the signatures of a
 * one-pass signed message are read from the stream they wait in.
 */
export async function signedParts(
  message: openpgp.Message<Uint8Array>,
): Promise<
  { signatures: openpgp.SignaturePacket[]; literal: openpgp.LiteralDataPacket | undefined }
> {
  const packets = message.unwrapCompressed().packets;
  const signatures: openpgp.SignaturePacket[] = [];
  let literal: openpgp.LiteralDataPacket | undefined;
  for (const p of [...packets, ...await trailingPackets(packets)]) {
    if (p instanceof openpgp.SignaturePacket) signatures.push(p);
    else if (p instanceof openpgp.LiteralDataPacket) literal ??= p;
  }
  return { signatures, literal };
}
