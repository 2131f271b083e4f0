/**
 * The claims of a signed license (a JWT payload) and their parser: one place that names every
 * claim, used by the gateway to read licenses and by the license server to write them.
 */

/** JWT claim names of a license (docs/licenses.md#the-license-file documents them). */
export const LicenseClaim = {
  ID: "jti",
  ISSUED_AT: "iat",
  EXPIRES_AT: "exp",
  TYPE: "license_type",
  CUSTOMER: "customer",
  MAX_DEVICES: "max_devices",
  GRACE_DAYS: "grace_days",
  DEVICE: "device",
  REVOKED: "revoked",
} as const;

/** A license as the gateway uses it; times in Unix milliseconds. */
export interface LicenseClaims {
  readonly id: string;
  readonly type: string;
  readonly customer: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly maxDevices: number;
  /** Days after `expiresAt` during which the license still works (`grace_period`). */
  readonly graceDays: number;
  /** The license device id (device_id.ts) of the one device this copy is bound to. */
  readonly device: string;
  /** True when the issuer revoked the license (delivered by sync). */
  readonly revoked: boolean;
}

/** The JWT payload for `claims` (seconds for times, as JWT wants). */
export function claimsToPayload(claims: LicenseClaims): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    [LicenseClaim.ID]: claims.id,
    [LicenseClaim.ISSUED_AT]: Math.floor(claims.issuedAt / 1000),
    [LicenseClaim.EXPIRES_AT]: Math.floor(claims.expiresAt / 1000),
    [LicenseClaim.TYPE]: claims.type,
    [LicenseClaim.CUSTOMER]: claims.customer,
    [LicenseClaim.MAX_DEVICES]: claims.maxDevices,
    [LicenseClaim.GRACE_DAYS]: claims.graceDays,
    [LicenseClaim.DEVICE]: claims.device,
  };
  if (claims.revoked) payload[LicenseClaim.REVOKED] = true;
  return payload;
}

const MAX_SECONDS = 8.64e12; // Date's range, in seconds

/**
 * Reads a verified JWT payload into claims; returns a reason naming the first claim that is
 * missing or of the wrong type.
 */
export function parseClaims(payload: unknown): LicenseClaims | string {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    return "the license payload is not a JSON object";
  }
  const o = payload as Record<string, unknown>;
  const text = (name: string): string | undefined => {
    const v = o[name];
    return typeof v === "string" && v.length > 0 && v.length <= 200 ? v : undefined;
  };
  const count = (name: string, min: number): number | undefined => {
    const v = o[name];
    return typeof v === "number" && Number.isInteger(v) && v >= min && v <= 1e6 ? v : undefined;
  };
  const time = (name: string): number | undefined => {
    const v = o[name];
    return typeof v === "number" && Number.isFinite(v) && Math.abs(v) <= MAX_SECONDS
      ? v * 1000
      : undefined;
  };
  const revoked = o[LicenseClaim.REVOKED];
  const claims = {
    id: text(LicenseClaim.ID),
    type: text(LicenseClaim.TYPE),
    customer: text(LicenseClaim.CUSTOMER),
    issuedAt: time(LicenseClaim.ISSUED_AT),
    expiresAt: time(LicenseClaim.EXPIRES_AT),
    maxDevices: count(LicenseClaim.MAX_DEVICES, 1),
    graceDays: count(LicenseClaim.GRACE_DAYS, 0),
    device: text(LicenseClaim.DEVICE),
  };
  const expected: Record<keyof typeof claims, string> = {
    id: `"${LicenseClaim.ID}" (a non-empty string)`,
    type: `"${LicenseClaim.TYPE}" (a non-empty string)`,
    customer: `"${LicenseClaim.CUSTOMER}" (a non-empty string)`,
    issuedAt: `"${LicenseClaim.ISSUED_AT}" (Unix seconds)`,
    expiresAt: `"${LicenseClaim.EXPIRES_AT}" (Unix seconds)`,
    maxDevices: `"${LicenseClaim.MAX_DEVICES}" (an integer of at least 1)`,
    graceDays: `"${LicenseClaim.GRACE_DAYS}" (an integer of at least 0)`,
    device: `"${LicenseClaim.DEVICE}" (the device id it is bound to)`,
  };
  for (const key of Object.keys(expected) as (keyof typeof claims)[]) {
    if (claims[key] === undefined) return `the license lacks a valid claim ${expected[key]}`;
  }
  if (revoked !== undefined && typeof revoked !== "boolean") {
    return `the license claim "${LicenseClaim.REVOKED}" is not a boolean`;
  }
  return { ...(claims as Omit<LicenseClaims, "revoked">), revoked: revoked === true };
}
