/** Checks an offer or answer from the peer before anything is dialed: shape, pin, size limit. */
import { P2pWire } from "../../constants.ts";
import { type Candidate, parseCandidate } from "./candidates.ts";
import { checkPeerCertificate, type PeerCertificate } from "./certificate.ts";
import { decodeBase64Url } from "./base64url.ts";
import type { P2pAnswer, P2pOffer } from "./types.ts";

/** A checked peer description: what the dialer needs. */
export interface PeerDescription {
  transferId: string;
  candidates: Candidate[];
  cert: PeerCertificate;
  /** The token we present when we connect to this peer. */
  token: Uint8Array;
  expiresAt: number;
}

/** Why an offer or answer is refused (logged once per transfer and reason). */
export type DescriptionRefusal = "forged_offer" | "size_limit" | "expired";

/** The refusal and a detail for the log (never a secret). */
export interface RefusedDescription {
  refused: DescriptionRefusal;
  detail: string;
}

const TRANSFER_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/** Checks the common part of an offer and an answer. */
export function checkDescription(
  d: P2pOffer | P2pAnswer,
  now: number,
  maxCertValidityMs: number,
): PeerDescription | RefusedDescription {
  const forged = (detail: string): RefusedDescription => ({ refused: "forged_offer", detail });
  if (typeof d !== "object" || d === null || d.v !== P2pWire.VERSION) return forged("version");
  if (typeof d.transfer_id !== "string" || !TRANSFER_ID.test(d.transfer_id)) {
    return forged("transfer id");
  }
  if (!Number.isSafeInteger(d.expires_at)) return forged("expiry");
  if (d.expires_at < now) return { refused: "expired", detail: "offer expired" };
  if (typeof d.token !== "string" || typeof d.cert !== "string") return forged("token or cert");
  let token: Uint8Array;
  try {
    token = decodeBase64Url(d.token);
  } catch {
    return forged("token");
  }
  if (token.length !== P2pWire.TOKEN_BYTES) return forged("token length");
  if (!Array.isArray(d.candidates) || d.candidates.length > P2pWire.MAX_CANDIDATES) {
    return forged("candidates");
  }
  const candidates: Candidate[] = [];
  for (const c of d.candidates) {
    const parsed = typeof c === "string" ? parseCandidate(c) : undefined;
    if (!parsed) return forged("candidate");
    candidates.push(parsed);
  }
  if (typeof d.pin !== "string" || !HEX64.test(d.pin) || typeof d.server_name !== "string") {
    return forged("pin");
  }
  const cert = checkPeerCertificate(d.cert, d.pin, d.server_name, now, maxCertValidityMs);
  if (typeof cert === "string") return forged(cert);
  return { transferId: d.transfer_id, candidates, cert, token, expiresAt: d.expires_at };
}

/** Checks an offer: the common part, then the size (against `maxSize`) and the SHA-256. */
export function checkOffer(
  o: P2pOffer,
  now: number,
  maxCertValidityMs: number,
  maxSize: number,
): (PeerDescription & { size: number; sha256: string }) | RefusedDescription {
  const d = checkDescription(o, now, maxCertValidityMs);
  if ("refused" in d) return d;
  if (!Number.isSafeInteger(o.size) || o.size < 0) {
    return { refused: "forged_offer", detail: "size" };
  }
  if (o.size > maxSize) return { refused: "size_limit", detail: `${o.size} > ${maxSize}` };
  if (typeof o.sha256 !== "string" || !HEX64.test(o.sha256)) {
    return { refused: "forged_offer", detail: "sha256" };
  }
  return { ...d, size: o.size, sha256: o.sha256 };
}
