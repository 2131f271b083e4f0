/** Signs a device's copy of a license (a JWT with the claims of license/claims.ts). */
import { SignJWT } from "jose";
import { claimsToPayload } from "../src/license/claims.ts";
import type { LicenseRow } from "./db.ts";
import type { SigningKey } from "./signing_key.ts";

/** The `iss` of every token this server signs. */
export const ISSUER = "edge-license-server";

/** A compact JWS (EdDSA) of `license` bound to `deviceId`, issued at `now` (Unix ms). */
export async function signLicense(
  key: SigningKey,
  license: LicenseRow,
  deviceId: string,
  now: number,
): Promise<string> {
  const payload = claimsToPayload({
    id: license.id,
    type: license.type,
    customer: license.customer,
    issuedAt: now,
    expiresAt: license.expires_at,
    maxDevices: license.max_devices,
    graceDays: license.grace_days,
    device: deviceId,
    revoked: license.revoked_at !== null,
  });
  return await new SignJWT({ ...payload, iss: ISSUER })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: key.keyId })
    .sign(key.privateKey);
}
