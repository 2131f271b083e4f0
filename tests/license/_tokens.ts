/** Test signing keys and license tokens, signed with jose as the license server signs them. */
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { claimsToPayload, type LicenseClaims } from "../../src/license/claims.ts";
import { importTrustedKey, type TrustedKey } from "../../src/license/verify.ts";

/** A fresh Ed25519 key pair, with its public half as a trusted key. */
export async function testKey(name = "test key") {
  const pair = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const pem = await exportSPKI(pair.publicKey);
  const trusted: TrustedKey = await importTrustedKey(name, pem);
  return { privateKey: pair.privateKey, pem, trusted };
}

export const DEVICE = "a".repeat(64);
export const T0 = Date.parse("2030-01-01T00:00:00Z");
const DAY = 86_400_000;

/** Claims of a 30-day license issued at T0 to DEVICE, with `over` applied. */
export function claims(over: Partial<LicenseClaims> = {}): LicenseClaims {
  return {
    id: "LIC-1",
    type: "standard",
    customer: "ACME",
    issuedAt: T0,
    expiresAt: T0 + 30 * DAY,
    maxDevices: 2,
    graceDays: 7,
    device: DEVICE,
    revoked: false,
    ...over,
  };
}

/** Signs `payload` (claims or raw) with `key`; `kid` defaults to the key's id. */
export async function sign(
  key: { privateKey: CryptoKey; trusted: TrustedKey },
  payload: LicenseClaims | Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const body = "expiresAt" in payload ? claimsToPayload(payload as LicenseClaims) : payload;
  return await new SignJWT(body)
    .setProtectedHeader({ alg: "EdDSA", kid: key.trusted.keyId, ...header })
    .sign(key.privateKey);
}
