/**
 * The license device id: what a license is bound to and what the license server sees. v2 (this
 * build) comes from the installation id and the machine id (docs/identity.md), so a new MAC or a
 * re-created container keeps it; v1 came from the viewer's device fingerprint and is recognised
 * only to move an existing binding to v2.
 */
import { toHex } from "../bytes.ts";

const CONTEXT_V1 = "edge-gateway license device v1\n";
const CONTEXT_V2 = "edge-gateway license device v2\n";

async function sha256Hex(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return toHex(new Uint8Array(hash));
}

/** v2: `lowercase_hex(SHA-256(UTF-8(context ‖ installation_id ‖ "\n" ‖ machine_id)))`. */
export function licenseDeviceId(installationId: string, machineId: string): Promise<string> {
  return sha256Hex(CONTEXT_V2 + installationId + "\n" + machineId);
}

/** v1 (earlier builds): `lowercase_hex(SHA-256(UTF-8(context ‖ fingerprint)))`. */
export function legacyLicenseDeviceId(fingerprint: string): Promise<string> {
  return sha256Hex(CONTEXT_V1 + fingerprint);
}
