/**
 * Verifies a license token (a compact JWS signed with Ed25519) against the trusted public keys
 * with `jose`, then reads its claims. Pure: no clock, files or network.
 */
import { compactVerify, importSPKI } from "jose";
import { describeError } from "../errors.ts";
import { type LicenseClaims, parseClaims } from "./claims.ts";
import { spkiKeyId } from "./spki.ts";

export { spkiKeyId };

/** JWS algorithms accepted for licenses: Ed25519 under its old and its fully specified name. */
export const LICENSE_ALGORITHMS = ["EdDSA", "Ed25519"] as const;

/** A public key licenses may be signed with. */
export interface TrustedKey {
  /** Where it came from (a built-in name or a file path), for logs and errors. */
  readonly name: string;
  /** `kid` of the tokens it signs: the first 16 hex digits of SHA-256(SPKI DER). */
  readonly keyId: string;
  readonly key: CryptoKey;
}

/** Imports an Ed25519 SPKI PEM; the error says what `name` holds instead. */
export async function importTrustedKey(name: string, pem: string): Promise<TrustedKey> {
  try {
    const key = await importSPKI(pem.trim(), "EdDSA");
    return { name, keyId: await spkiKeyId(pem), key };
  } catch (err) {
    throw new Error(
      `${name} is not an Ed25519 public key in SPKI PEM form (${describeError(err)})`,
      { cause: err },
    );
  }
}

/** The result of verifying a token: its claims and the key that signed it, or why it failed. */
export type Verified =
  | { readonly ok: true; readonly claims: LicenseClaims; readonly signer: TrustedKey }
  | { readonly ok: false; readonly reason: string };

function headerKeyId(token: string): string | undefined {
  try {
    const header = JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(
          atob(token.split(".")[0].replace(/-/g, "+").replace(/_/g, "/")),
          (c) => c.charCodeAt(0),
        ),
      ),
    );
    return typeof header?.kid === "string" ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies `token` with the key its `kid` names (or, without a `kid`, with each trusted key),
 * then parses the claims. Expiry is not judged here: status.ts does, with its grace period.
 */
export async function verifyLicenseToken(
  token: string,
  keys: readonly TrustedKey[],
): Promise<Verified> {
  const compact = token.trim();
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(compact)) {
    return { ok: false, reason: "the license is not a signed token (compact JWS)" };
  }
  if (keys.length === 0) {
    return { ok: false, reason: "this build trusts no license signing key" };
  }
  const kid = headerKeyId(compact);
  const candidates = kid === undefined ? keys : keys.filter((k) => k.keyId === kid);
  if (candidates.length === 0) {
    return { ok: false, reason: `the license is signed by an untrusted key (kid ${kid})` };
  }
  let lastError = "";
  for (const signer of candidates) {
    try {
      const { payload } = await compactVerify(compact, signer.key, {
        algorithms: [...LICENSE_ALGORITHMS],
      });
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder().decode(payload));
      } catch {
        return { ok: false, reason: "the license payload is not JSON" };
      }
      const claims = parseClaims(json);
      if (typeof claims === "string") return { ok: false, reason: claims };
      return { ok: true, claims, signer };
    } catch (err) {
      lastError = describeError(err);
    }
  }
  return { ok: false, reason: `the license signature does not verify (${lastError})` };
}
