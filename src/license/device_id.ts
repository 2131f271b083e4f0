/**
 * The license device id: what a license is bound to and what the license server sees. Derived
 * from the viewer's device fingerprint so that the fingerprint itself (the viewer's `/auth`
 * credential) never leaves the gateway or lands in a license file.
 */
import { toHex } from "../bytes.ts";

const CONTEXT = "edge-gateway license device v1\n";

/** `lowercase_hex(SHA-256(UTF-8(context ‖ fingerprint)))`. */
export async function licenseDeviceId(fingerprint: string): Promise<string> {
  const data = new TextEncoder().encode(CONTEXT + fingerprint);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return toHex(hash);
}
