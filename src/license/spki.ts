/**
 * SPKI PEM helpers without dependencies (the key generator of compile.sh uses them offline):
 * the DER inside a `PUBLIC KEY` PEM, its key id, and a check that it is an Ed25519 key.
 */

/** The DER bytes of a single-key PEM (`-----BEGIN PUBLIC KEY-----`), or undefined. */
export function pemBody(pem: string): Uint8Array<ArrayBuffer> | undefined {
  const m = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
  if (!m) return undefined;
  try {
    return Uint8Array.from(atob(m[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** The key id of an SPKI PEM: the first 16 hex digits of SHA-256(DER). */
export async function spkiKeyId(pem: string): Promise<string> {
  const der = pemBody(pem);
  if (der === undefined) throw new Error("not a PEM public key (BEGIN PUBLIC KEY)");
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return Array.from(hash.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Throws unless `pem` is an Ed25519 public key in SPKI PEM form. */
export async function assertEd25519Spki(pem: string): Promise<void> {
  const der = pemBody(pem);
  if (der === undefined) throw new Error("not a PEM public key (BEGIN PUBLIC KEY)");
  await crypto.subtle.importKey("spki", der, { name: "Ed25519" }, true, ["verify"]);
}
