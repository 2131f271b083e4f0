/**
 * The license server's Ed25519 signing key: `<data dir>/signing-key.pem` (PKCS#8, mode 0600),
 * created on first use. Its public half (SPKI PEM) is what gateways trust.
 */
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8 } from "jose";
import { spkiKeyId } from "../src/license/spki.ts";

/** The signing key, its public PEM and its key id (`kid` of every token it signs). */
export interface SigningKey {
  readonly privateKey: CryptoKey;
  readonly publicPem: string;
  readonly keyId: string;
}

/** Loads `<dataDir>/signing-key.pem`, creating it when absent. */
export async function loadSigningKey(dataDir: string): Promise<SigningKey> {
  const path = `${dataDir}/signing-key.pem`;
  let pem: string;
  try {
    pem = await Deno.readTextFile(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    pem = await exportPKCS8(pair.privateKey);
    await Deno.writeTextFile(path, pem, { mode: 0o600, createNew: true }).catch(async (e) => {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      pem = await Deno.readTextFile(path); // another command created it first
    });
  }
  const privateKey = await importPKCS8(pem, "EdDSA", { extractable: true });
  // The public half: the private JWK without its secret `d`.
  const { d: _secret, ...publicJwk } = await crypto.subtle.exportKey("jwk", privateKey);
  const publicKey = await crypto.subtle.importKey(
    "jwk",
    { ...publicJwk, key_ops: ["verify"] },
    { name: "Ed25519" },
    true,
    ["verify"],
  );
  const publicPem = await exportSPKI(publicKey);
  return { privateKey, publicPem, keyId: await spkiKeyId(publicPem) };
}
