/**
 * Judges a license against this device and a clock: the status (`no_license`, `active`,
 * `grace_period`, `expired`, `clock_tampered`, `invalid`) and a reason a person can act on.
 * Pure: the caller passes the clock and the stored high-water mark.
 */
import { LicenseReasonCode, LicenseStatus } from "../constants.ts";
import type { LicenseClaims } from "./claims.ts";

/** Clock drift tolerated before `clock_tampered` (NTP steps, the issuer's own clock). */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

const DAY_MS = 86_400_000;

/** What the license file held. */
export type LicenseFileState =
  | { readonly kind: "absent" }
  | { readonly kind: "unusable"; readonly reason: string }
  | { readonly kind: "verified"; readonly claims: LicenseClaims };

/** Everything the judgment depends on. */
export interface LicenseFacts {
  readonly file: LicenseFileState;
  /** This device's license device id (v2). */
  readonly deviceId: string;
  /** This device's v1 id (earlier builds): a license bound to it still counts (docs/identity.md). */
  readonly legacyDeviceId?: string | undefined;
  /** Set when the installation moved to another machine and no license was bound since. */
  readonly moved?: InstallationMove | undefined;
  /** The clock now, Unix ms. */
  readonly now: number;
  /** The clock high-water mark: a time this gateway really lived through (local_state.ts). */
  readonly highWater?: number | undefined;
  /** The issue time of the latest copy of this license deactivated on this device, if any. */
  readonly deactivatedIssuedAt?: number | undefined;
}

/** A move of the installation (docs/identity.md): the machine id changed between starts. */
export interface InstallationMove {
  /** The machine id of the start before. */
  readonly from: string;
  /** The machine id now. */
  readonly to: string;
  /** When the move was seen, Unix ms. */
  readonly at: number;
}

/** A status and why. */
export interface LicenseVerdict {
  readonly status: LicenseStatus;
  readonly reason: string;
  /** A name for the reason a program can act on, when there is one. */
  readonly code?: LicenseReasonCode;
}

const iso = (ms: number) => new Date(ms).toISOString();

const LEGACY_NOTE = "; it is bound under this device's v1 id (an earlier build), and the next " +
  "license sync or activate re-binds it to this installation";

/** The status of the license described by `facts`, first failing check first. */
export function judgeLicense(facts: LicenseFacts): LicenseVerdict {
  const { file, now } = facts;
  if (file.kind === "absent") {
    return { status: LicenseStatus.NO_LICENSE, reason: "no license is installed" };
  }
  if (file.kind === "unusable") return { status: LicenseStatus.INVALID, reason: file.reason };
  const c = file.claims;
  const legacy = c.device !== facts.deviceId && facts.legacyDeviceId !== undefined &&
    c.device === facts.legacyDeviceId;
  if (c.device !== facts.deviceId && !legacy && facts.moved !== undefined) {
    return {
      status: LicenseStatus.INVALID,
      code: LicenseReasonCode.INSTALLATION_MOVED,
      reason: `this installation moved to another machine (machine id ` +
        `${facts.moved.from.slice(0, 8)}… → ${facts.moved.to.slice(0, 8)}…, seen at ` +
        `${iso(facts.moved.at)}); license ${c.id} is still bound to the device before: run ` +
        "license activate <url> to re-bind it (the license server frees the old seat)",
    };
  }
  if (c.device !== facts.deviceId && !legacy) {
    return {
      status: LicenseStatus.INVALID,
      reason: `license ${c.id} is bound to another device (${c.device.slice(0, 12)}…), ` +
        `not this one (${facts.deviceId.slice(0, 12)}…)`,
    };
  }
  if (facts.deactivatedIssuedAt !== undefined && c.issuedAt <= facts.deactivatedIssuedAt) {
    return {
      status: LicenseStatus.NO_LICENSE,
      reason: `license ${c.id} was deactivated on this device; the file is kept for inspection ` +
        "only",
    };
  }
  if (c.revoked) {
    return { status: LicenseStatus.INVALID, reason: `license ${c.id} was revoked by its issuer` };
  }
  if (now < c.issuedAt - CLOCK_TOLERANCE_MS) {
    return {
      status: LicenseStatus.CLOCK_TAMPERED,
      reason: `the system clock (${iso(now)}) is earlier than the license's issue time ` +
        `(${iso(c.issuedAt)}); correct the clock`,
    };
  }
  if (facts.highWater !== undefined && now < facts.highWater - CLOCK_TOLERANCE_MS) {
    return {
      status: LicenseStatus.CLOCK_TAMPERED,
      reason: `the system clock (${iso(now)}) is earlier than a time this gateway already saw ` +
        `(${iso(facts.highWater)}); the clock was set back: correct it`,
    };
  }
  if (now < c.expiresAt) {
    return {
      status: LicenseStatus.ACTIVE,
      reason: `license ${c.id} is valid until ${iso(c.expiresAt)}` + (legacy ? LEGACY_NOTE : ""),
      ...(legacy ? { code: LicenseReasonCode.LEGACY_BINDING } : {}),
    };
  }
  const graceEnd = c.expiresAt + c.graceDays * DAY_MS;
  if (now < graceEnd) {
    return {
      status: LicenseStatus.GRACE_PERIOD,
      reason: `license ${c.id} expired at ${iso(c.expiresAt)}; its grace period ends at ` +
        `${iso(graceEnd)}: renew it, then run license sync`,
    };
  }
  return {
    status: LicenseStatus.EXPIRED,
    reason: `license ${c.id} expired at ${iso(c.expiresAt)}` +
      (c.graceDays > 0 ? ` and its grace period ended at ${iso(graceEnd)}` : ""),
  };
}

/** True for the statuses under which gated methods run (`active`, `grace_period`). */
export function permitsGatedCalls(status: string): boolean {
  return status === LicenseStatus.ACTIVE || status === LicenseStatus.GRACE_PERIOD;
}
