/**
 * The license gate dispatch applies to method entries flagged `license: true`: it lets the call
 * through only while the license permits it (`active` or `grace_period`), and otherwise answers
 * -32001 naming the status, why, and the command that fixes it (docs/contract.md §5.3, §7).
 */
import { LicenseStatus, RpcCode } from "../constants.ts";
import { GatewayError, LicenseRequiredError } from "../errors.ts";
import type { LicenseSource } from "./manager.ts";

const ACTIVATE = "edge-gateway license activate <url>";

/** What fixes each blocking status, as the end of the -32001 message. */
const FIX: Readonly<Record<string, string>> = {
  [LicenseStatus.EXPIRED]: "Renew it with its issuer, then run: edge-gateway license sync " +
    `(or activate another with: ${ACTIVATE})`,
  [LicenseStatus.CLOCK_TAMPERED]: "Correct the system clock, then retry " +
    "(edge-gateway license status shows the status)",
  [LicenseStatus.INVALID]: `Activate a valid license for this device with: ${ACTIVATE}`,
};

/**
 * Throws a -32001 error unless `license` permits gated calls. With no license installed the
 * error is `LicenseRequiredError` (docs/contract.md §7 text: "no_license" and the activate
 * command); with another status the text names that status, its reason and its fix.
 */
export function requireLicense(method: string, license: LicenseSource): void {
  if (license.isActive()) return;
  const status = license.status();
  if (status === LicenseStatus.NO_LICENSE) throw new LicenseRequiredError(method);
  const reason = license.reason();
  throw new GatewayError(
    `License required: "${method}" needs an active license, but the license status is ${status}` +
      (reason ? ` (${reason})` : "") + `. ${FIX[status] ?? `Activate one with: ${ACTIVATE}`}`,
    RpcCode.LICENSE_REQUIRED,
  );
}
