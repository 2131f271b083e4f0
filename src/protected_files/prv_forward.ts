/**
 * Forwarding a protected file (docs/prv-format.md, Forwarding): the forwarder's signed `forward`
 * PDU, its checks at the new recipient (the owner's file_pdu, rules never looser) and at the
 * owner (signed by a current recipient allowed to forward). No key share is in a forward.
 */
import * as openpgp from "openpgp";
import { fromBase64, toBase64 } from "../crypto/armor.ts";
import { fingerprintOf } from "../crypto/pgp.ts";
import type { AccessRecord, ContactRecord, SentFileRecord } from "../store/mod.ts";
import {
  type AccessRules,
  decodePdu,
  type FilePdu,
  type ForwardPdu,
  PDU_VERSION,
  PduError,
  PduType,
  type SignedPdu,
  signPdu,
  verifyPdu,
} from "./pdu.ts";

/** The rule `rules` loosens compared with `limit`, or undefined when it keeps or tightens all. */
export function loosenedRule(rules: AccessRules, limit: AccessRules): string | undefined {
  if (rules.allow_download && !limit.allow_download) return "allow_download";
  if (rules.allow_forward && !limit.allow_forward) return "allow_forward";
  if (
    limit.duration_minutes > 0 &&
    (rules.duration_minutes === 0 || rules.duration_minutes > limit.duration_minutes)
  ) {
    return "duration_minutes";
  }
  return undefined;
}

/** Rules read from untrusted JSON; PduError when a field is missing or of the wrong kind. */
export function rulesOf(value: unknown): AccessRules {
  const r = value as Record<string, unknown> | null;
  if (
    typeof r !== "object" || r === null || typeof r.allow_download !== "boolean" ||
    typeof r.allow_forward !== "boolean" || !Number.isInteger(r.duration_minutes) ||
    (r.duration_minutes as number) < 0
  ) {
    throw new PduError("forward without valid rules");
  }
  return {
    allow_download: r.allow_download,
    allow_forward: r.allow_forward,
    duration_minutes: r.duration_minutes as number,
  };
}

/** The rules of one recipient at the owner: its own (a forward's) or the file's. */
export function accessRules(sent: SentFileRecord, access: AccessRecord): AccessRules {
  if (access.rules !== "") return rulesOf(JSON.parse(access.rules));
  return {
    allow_download: sent.allowDownload,
    allow_forward: sent.allowForward,
    duration_minutes: sent.durationMinutes,
  };
}

/** What the forwarder signs for one new recipient. */
export interface ForwardInput {
  readonly fileUid: string;
  readonly filePdu: string;
  readonly owner: ContactRecord;
  readonly forwarder: string;
  readonly recipient: string;
  readonly rules: AccessRules;
  readonly now: number;
}

/** Signs a forward PDU with the forwarder's key. */
export function signForward(
  f: ForwardInput,
  key: openpgp.PrivateKey,
): Promise<SignedPdu<ForwardPdu>> {
  return signPdu({
    v: PDU_VERSION,
    file_uid: f.fileUid,
    issued_at: f.now,
    type: PduType.FORWARD,
    forwarder: f.forwarder,
    recipient: f.recipient,
    owner: f.owner.fingerprint,
    owner_addr: f.owner.addr,
    owner_key: toBase64(f.owner.publicKey),
    file_pdu: f.filePdu,
    rules: f.rules,
  }, key);
}

/** A forward the new recipient accepted: the owner's file_pdu and how to reach the owner. */
export interface AcceptedForward {
  readonly file: FilePdu;
  readonly rules: AccessRules;
  readonly ownerKey: Uint8Array;
  readonly ownerAddr: string;
}

/**
 * The new recipient's check of a forward (already verified under the forwarder's key): the
 * owner's key has the owner's fingerprint, the embedded file_pdu is signed by it, describes
 * this `.prv` (`prvHashPrefix`), allows forwarding, and the forward's rules are not looser.
 */
export async function acceptForward(
  fwd: ForwardPdu,
  prvHashPrefix: string,
): Promise<AcceptedForward> {
  const rules = rulesOf(fwd.rules);
  let ownerKey: Uint8Array;
  try {
    ownerKey = fromBase64(fwd.owner_key);
    const key = await openpgp.readKey({ binaryKey: ownerKey });
    if (fingerprintOf(key) !== fwd.owner) throw new Error("fingerprint mismatch");
  } catch (cause) {
    throw new PduError("forward: owner_key is not the owner's key", { cause });
  }
  const file = await verifyPdu(fwd.file_pdu, ownerKey);
  if (
    file.type !== PduType.FILE || file.owner !== fwd.owner || file.file_uid !== fwd.file_uid ||
    file.prv_sha256.slice(0, prvHashPrefix.length) !== prvHashPrefix
  ) {
    throw new PduError("forward: the file_pdu does not describe this .prv");
  }
  if (file.rules.allow_forward !== true) {
    throw new PduError("forward: the owner set allow_forward=false");
  }
  const loosened = loosenedRule(rules, file.rules);
  if (loosened !== undefined) {
    throw new PduError(`forward: it loosens the owner's rule ${loosened}`);
  }
  if (typeof fwd.owner_addr !== "string" || !fwd.owner_addr.includes("@")) {
    throw new PduError("forward: no owner address");
  }
  return { file, rules, ownerKey, ownerAddr: fwd.owner_addr };
}

/** What the owner needs to judge a forward. */
export interface OwnerView {
  readonly sent: SentFileRecord;
  readonly access: readonly AccessRecord[];
  readonly selfFingerprint: string;
  readonly requester: string;
  readonly now: number;
  /** The public key of a contact (the forwarder). */
  readonly keyOf: (contactId: number) => Uint8Array | undefined;
}

/** A forward the owner accepts: who forwarded and the new recipient's rules. */
export interface OwnerVerdict {
  readonly forwarder: AccessRecord;
  readonly rules: AccessRules;
}

/**
 * The owner's check of the forward a request carries: for this file, the owner's own file_pdu,
 * naming the requester; the file allows forwarding; signed by a current (not revoked, not
 * expired) recipient whose own rules allow forwarding; rules not looser than that recipient's.
 * Throws PduError saying what failed.
 */
export async function checkForwardAtOwner(encoded: string, v: OwnerView): Promise<OwnerVerdict> {
  const { pdu } = decodePdu(encoded);
  if (pdu.type !== PduType.FORWARD) throw new PduError("request.forward is not a forward PDU");
  if (pdu.file_uid !== v.sent.fileUid || pdu.file_pdu !== v.sent.filePdu) {
    throw new PduError("the forward is for another file");
  }
  if (pdu.owner !== v.selfFingerprint) throw new PduError("the forward names another owner");
  if (pdu.recipient !== v.requester) throw new PduError("the forward names another recipient");
  if (!v.sent.allowForward) throw new PduError("the owner set allow_forward=false");
  const forwarder = v.access.find((a) => a.fingerprint === pdu.forwarder);
  if (forwarder === undefined) throw new PduError("the forwarder is not a recipient of the file");
  const key = v.keyOf(forwarder.contactId);
  if (key === undefined || key.length === 0) throw new PduError("the forwarder has no key");
  await verifyPdu(encoded, key);
  if (forwarder.state === "revoked") {
    throw new PduError("the forwarder's access was revoked");
  }
  if (forwarder.windowEnd > 0 && v.now >= forwarder.windowEnd) {
    throw new PduError("the forwarder's access has expired");
  }
  const limit = accessRules(v.sent, forwarder);
  if (!limit.allow_forward) throw new PduError("the forwarder may not forward (allow_forward)");
  const rules = rulesOf(pdu.rules);
  const loosened = loosenedRule(rules, limit);
  if (loosened !== undefined) {
    throw new PduError(`the forward loosens the forwarder's rule ${loosened}`);
  }
  return { forwarder, rules };
}
