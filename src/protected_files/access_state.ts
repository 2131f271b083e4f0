/**
 * The access states of a protected file, as the product names them, and how a recipient's state
 * follows from what it stored, the grant it holds in memory and the clock. Pure.
 */
import type { ReceivedFileRecord } from "../store/mod.ts";

/** States per file and recipient (the product's `state_str` values). */
export const FileAccessState = {
  ACTIVE: "active",
  REQUESTED: "requested",
  EXPIRED: "expired",
  REVOKED: "revoked",
  DENIED: "denied",
  DELETED: "deleted",
  WAITING_OWNER_ACTION: "waiting_owner_action",
  NOT_FOUND: "not_found",
  /** Owner's view: the file is still travelling to that recipient as relay parts. */
  IN_TRANSFER: "in_transfer",
  /** Owner's view: the file never reached that recipient (send failed, transfer refused). */
  UNDELIVERED: "undelivered",
} as const;
export type FileAccessState = typeof FileAccessState[keyof typeof FileAccessState];

/** A state with the reason a person can act on. */
export interface AccessVerdict {
  readonly state: FileAccessState;
  readonly reason: string;
}

/** A grant held in memory. */
export interface HeldGrant {
  readonly s2: Uint8Array;
  /** Unix seconds; 0 = no end. */
  readonly notAfter: number;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

/**
 * The recipient's state of `rec` at `now` (Unix seconds): revoked, denied and a pending renewal
 * come from the store; past the window it is expired; with a grant in memory that is still
 * valid, active; otherwise requested (`askedAt`: when the owner was last asked, 0 never).
 */
export function recipientVerdict(
  rec: ReceivedFileRecord,
  grant: HeldGrant | undefined,
  now: number,
  askedAt: number,
): AccessVerdict {
  switch (rec.state) {
    case "revoked":
      return { state: "revoked", reason: "the owner revoked access to this file" };
    case "denied":
      return { state: "denied", reason: "the owner denied the renewal of access" };
    case "renew_requested":
      return {
        state: "waiting_owner_action",
        reason: "renewal asked for; waiting for the owner to grant or deny it",
      };
  }
  if (rec.windowEnd > 0 && now >= rec.windowEnd) {
    return {
      state: "expired",
      reason: `the access window ended at ${iso(rec.windowEnd)}; ask the owner to renew it`,
    };
  }
  if (rec.s1.every((b) => b === 0)) {
    return {
      state: "requested",
      reason: rec.forwardPdu === ""
        ? "this gateway's key share (otk_pdu) has not arrived yet"
        : askedAt === 0
        ? "forwarded to this gateway: its key share comes from the owner; opening the file asks"
        : `forwarded to this gateway: asked the owner for a key share at ${iso(askedAt)}; the ` +
          `owner has not granted it (yet)`,
    };
  }
  if (grant !== undefined && (grant.notAfter === 0 || now < grant.notAfter)) {
    return { state: "active", reason: "" };
  }
  return {
    state: "requested",
    reason: askedAt === 0
      ? "this gateway holds no grant from the owner (e.g. after a restart); opening the file asks for one"
      : `asked the owner for access at ${iso(askedAt)}; no grant has arrived yet (the owner's ` +
        `gateway may be offline)`,
  };
}
