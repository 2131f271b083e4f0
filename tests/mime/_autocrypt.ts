/** Test helper: the fingerprint of the key in an Autocrypt header value. */
import { parseAutocrypt } from "../../src/crypto/autocrypt_header.ts";
import { fingerprintOf, readPublicKey } from "../../src/crypto/pgp.ts";

export async function parsePublicKeyFromAutocrypt(value: string, addr: string): Promise<string> {
  const h = parseAutocrypt(value);
  if (!h || h.addr !== addr) throw new Error("no valid Autocrypt header for " + addr);
  return fingerprintOf(await readPublicKey(h.keydata));
}
