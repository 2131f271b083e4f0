/**
 * The license gate dispatch applies to method entries flagged `license: true`: it lets the call
 * through only while the license source reports an active license (SPEC §5, §7).
 */
import { LicenseStatus, RpcCode } from "../constants.ts";
import { GatewayError, LicenseRequiredError } from "../errors.ts";
import type { LicenseSource } from "./status.ts";

/**
 * Throws a -32001 error unless `license` is active. With no license installed the error is
 * `LicenseRequiredError` (SPEC §7 text: "no_license" and the activate command); with another
 * status (e.g. "expired") the same text names that status instead.
 */
export function requireLicense(method: string, license: LicenseSource): void {
  if (license.isActive()) return;
  const status = license.status();
  if (status === LicenseStatus.NO_LICENSE) throw new LicenseRequiredError(method);
  throw new GatewayError(
    `License required: "${method}" needs an active license, but the license status is ${status}. ` +
      `Activate one with: edge-gateway license activate <url>`,
    RpcCode.LICENSE_REQUIRED,
  );
}
