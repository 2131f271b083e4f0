/**
 * The protected-file PDUs (docs/prv-format.md, PDUs): versioned JSON objects signed by the
 * sender's account key (a detached OpenPGP signature over the exact JSON bytes), carried
 * base64-encoded in the `Edge-Prv-Pdu` header (`Header.EDGE_PRV_PDU`) inside encrypted chat mail;
 * the header may repeat.
 */
import * as openpgp from "openpgp";
import { signingDate } from "../crypto/key_times.ts";
import { checkSignatures, type SignatureCheck } from "../crypto/signature_check.ts";
import { fromBase64, toBase64 } from "../crypto/armor.ts";

/** The PDU version this code writes and reads. */
export const PDU_VERSION = 1;
/** Largest encoded PDU accepted (a file_pdu with a long name and many recipients fits). */
export const MAX_PDU_CHARS = 64 * 1024;

/** PDU types. */
export const PduType = {
  FILE: "file_pdu",
  OTK: "otk_pdu",
  GRANT: "grant",
  REQUEST: "request",
  REVOKE: "revoke",
  DENY: "deny",
  FORWARD: "forward",
} as const;
export type PduType = typeof PduType[keyof typeof PduType];

/** Access rules set when the file is protected. */
export interface AccessRules {
  readonly allow_download: boolean;
  readonly allow_forward: boolean;
  /** Minutes from receipt; 0 = unlimited. */
  readonly duration_minutes: number;
}

interface PduBase {
  readonly v: typeof PDU_VERSION;
  /** The `.prv` header's random file id (hex). */
  readonly file_uid: string;
  /** Unix seconds. */
  readonly issued_at: number;
}

/** Everything a recipient needs to know about the file (never a key). */
export interface FilePdu extends PduBase {
  readonly type: typeof PduType.FILE;
  readonly owner: string;
  readonly recipients: readonly string[];
  readonly rules: AccessRules;
  readonly plaintext_sha256: string;
  readonly prv_sha256: string;
  readonly name: string;
  readonly mime: string;
  readonly size: number;
}

/** S1 for one recipient. */
export interface OtkPdu extends PduBase {
  readonly type: typeof PduType.OTK;
  readonly recipient: string;
  /** Base64 of S1. */
  readonly s1: string;
}

/** S2 for one recipient, valid until `not_after` (0: until the window the rules give ends). */
export interface GrantPdu extends PduBase {
  readonly type: typeof PduType.GRANT;
  readonly recipient: string;
  readonly s2: string;
  /**
   * Unix seconds the access ends; 0 = the rule's window from the recipient's receipt (the first
   * grant, sent with the file) or unlimited when the rules are.
   */
  readonly not_after: number;
  /** The request it answers ('' for the first grant). */
  readonly request_id: string;
}

/** A recipient asks for S2: `open` (after a restart) or `renew` (after expiry). */
export interface RequestPdu extends PduBase {
  readonly type: typeof PduType.REQUEST;
  readonly requester: string;
  readonly reason: "open" | "renew";
  readonly request_id: string;
  /** When the requester received the file (Unix seconds): where its window starts. */
  readonly received_at: number;
  /**
   * The encoded `forward` PDU that made the requester a recipient (absent for a recipient of the
   * owner's send): the owner checks it before it adds the requester.
   */
  readonly forward?: string;
}

/** The owner ends a recipient's access. */
export interface RevokePdu extends PduBase {
  readonly type: typeof PduType.REVOKE;
  readonly recipient: string;
}

/** The owner refuses a renewal. */
export interface DenyPdu extends PduBase {
  readonly type: typeof PduType.DENY;
  readonly recipient: string;
  readonly request_id: string;
}

/**
 * A recipient (the forwarder) passes a file on: sent with the `.prv` to each new recipient, who
 * verifies the owner's file_pdu in it and asks the owner (not the forwarder) for its shares.
 */
export interface ForwardPdu extends PduBase {
  readonly type: typeof PduType.FORWARD;
  readonly forwarder: string;
  readonly recipient: string;
  readonly owner: string;
  /** The owner's address and binary public key (base64): the new recipient's way to the owner. */
  readonly owner_addr: string;
  readonly owner_key: string;
  /** The owner's signed file_pdu, encoded, exactly as the forwarder received it. */
  readonly file_pdu: string;
  /** The new recipient's rules: the forwarder's own, or stricter. */
  readonly rules: AccessRules;
}

export type Pdu = FilePdu | OtkPdu | GrantPdu | RequestPdu | RevokePdu | DenyPdu | ForwardPdu;

/** A PDU that could not be read or whose signature does not verify. */
export class PduError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PduError";
  }
}

/** A PDU with its encoded form (as sent in the `Edge-Prv-Pdu` header). */
export interface SignedPdu<P extends Pdu = Pdu> {
  readonly pdu: P;
  /** `base64(json) "." base64(detached signature)`. */
  readonly encoded: string;
}

/**
 * The whole PDU as one base64 string, as `PrivittySendFileResult`'s `file_pdu_b64` and
 * `otk_pdu_b64` give it: base64 of the UTF-8 bytes of its encoded form (so decoding it yields
 * the `Edge-Prv-Pdu` header value). `decodePdu` reads both forms.
 */
export function pduB64(encoded: string): string {
  return toBase64(new TextEncoder().encode(encoded));
}

/** Encodes and signs `pdu` with the account key. */
export async function signPdu<P extends Pdu>(
  pdu: P,
  key: openpgp.PrivateKey,
): Promise<SignedPdu<P>> {
  const json = new TextEncoder().encode(JSON.stringify(pdu));
  const sig = await openpgp.sign({
    message: await openpgp.createMessage({ binary: json }),
    signingKeys: key,
    date: signingDate(key, Date.now()),
    detached: true,
    format: "binary",
  }) as Uint8Array;
  return { pdu, encoded: `${toBase64(json)}.${toBase64(sig)}` };
}

const HEX = /^[0-9a-f]+$/;
const TYPES: readonly string[] = Object.values(PduType);

/** The encoded form of `text`: itself, or unwrapped when it is the one-string form (`pduB64`). */
function unwrapPdu(text: string): string {
  if (text.includes(".")) return text;
  if (text.length > Math.ceil(MAX_PDU_CHARS / 3) * 4) throw new PduError("PDU too large");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(fromBase64(text));
  } catch (cause) {
    throw new PduError("not a PDU (expected base64 JSON . base64 signature)", { cause });
  }
}

/**
 * Reads an encoded PDU without checking its signature (structure only): the header form
 * `base64(json) "." base64(sig)` or the one-string form `pduB64` gives.
 */
export function decodePdu(encoded: string): { pdu: Pdu; json: Uint8Array; sig: Uint8Array } {
  const text = unwrapPdu(encoded.replace(/\s+/g, ""));
  if (text.length > MAX_PDU_CHARS) throw new PduError("PDU too large");
  const [a, b, extra] = text.split(".");
  if (a === undefined || b === undefined || extra !== undefined) {
    throw new PduError("not a PDU (expected base64 JSON . base64 signature)");
  }
  let json: Uint8Array, sig: Uint8Array, value: unknown;
  try {
    json = fromBase64(a);
    sig = fromBase64(b);
    value = JSON.parse(new TextDecoder().decode(json));
  } catch (cause) {
    throw new PduError("not a PDU: undecodable", { cause });
  }
  const p = value as Record<string, unknown>;
  if (typeof p !== "object" || p === null || p.v !== PDU_VERSION) {
    throw new PduError(`unsupported PDU version ${JSON.stringify(p?.v)} (this gateway reads 1)`);
  }
  if (typeof p.type !== "string" || !TYPES.includes(p.type)) {
    throw new PduError(`unknown PDU type ${JSON.stringify(p.type)}`);
  }
  if (typeof p.file_uid !== "string" || p.file_uid.length !== 32 || !HEX.test(p.file_uid)) {
    throw new PduError("PDU without a valid file_uid");
  }
  if (typeof p.issued_at !== "number") throw new PduError("PDU without issued_at");
  return { pdu: p as unknown as Pdu, json, sig };
}

/**
 * Decodes `encoded` and verifies its detached signature under `signer` (the public key of the
 * contact the PDU must come from). Throws PduError when it does not verify.
 */
export async function verifyPdu(encoded: string, signer: Uint8Array): Promise<Pdu> {
  const { pdu, json, sig } = decodePdu(encoded);
  let check: SignatureCheck;
  try {
    const message = await openpgp.createMessage({ binary: json });
    const literal = message.packets.findPacket(openpgp.enums.packet.literalData);
    const signature = await openpgp.readSignature({ binarySignature: sig });
    const signatures = [...signature.packets.filterByTag(openpgp.enums.packet.signature)];
    check = await checkSignatures(
      signatures as openpgp.SignaturePacket[],
      literal as openpgp.LiteralDataPacket,
      [await openpgp.readKey({ binaryKey: signer })],
      true,
    );
  } catch (cause) {
    throw new PduError(`the ${pdu.type} signature does not verify`, { cause });
  }
  if (!check.valid) {
    throw new PduError(`the ${pdu.type} signature does not verify: ${check.detail}`);
  }
  return pdu;
}

/** Folds an encoded PDU into header continuation lines (76 characters each). */
export function foldPdu(encoded: string): string {
  const lines: string[] = [];
  for (let i = 0; i < encoded.length; i += 76) lines.push(encoded.slice(i, i + 76));
  return lines.join("\r\n ");
}

/** Bytes of a base64 share field; PduError when it is not 32 bytes. */
export function shareOf(b64: unknown, what: string): Uint8Array {
  let bytes: Uint8Array | undefined;
  try {
    bytes = typeof b64 === "string" ? fromBase64(b64) : undefined;
  } catch { /* below */ }
  if (bytes?.byteLength !== 32) throw new PduError(`${what} is not a 32-byte key share`);
  return bytes;
}

/** Base64 of a key share. */
export const shareB64 = (bytes: Uint8Array): string => toBase64(bytes);
