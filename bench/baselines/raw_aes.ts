/** The raw AES-256-GCM baseline's pieces, shared by the `.prv` benchmarks: a key and nonces. */

/** A fresh random AES-256-GCM key for encrypting and decrypting (not extractable). */
export function randomAesKey(): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    crypto.getRandomValues(new Uint8Array(32)),
    "AES-GCM",
    false,
    ["encrypt", "decrypt"],
  );
}

/** A 96-bit nonce holding `i` (chunk `i`'s, as the baselines number their calls). */
export function ivOf(i: number): Uint8Array<ArrayBuffer> {
  const iv = new Uint8Array(12);
  new DataView(iv.buffer).setUint32(8, i);
  return iv;
}
