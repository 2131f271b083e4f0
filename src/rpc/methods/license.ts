/**
 * License RPC methods (`license_status`, `license_activate`, `license_sync`,
 * `license_deactivate`) (docs/contract.md §5.3); the gated `secure_*` family is in secure_files.ts.
 */
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";

/**
 * `license_status [account_id]` → `{status, reason, device_id, ...}`.
 * `status` is `no_license`, `active`, `grace_period`, `expired`, `clock_tampered` or `invalid`;
 * a verified license adds `license_id`, `license_type`, `customer`, `issued_at`, `expires_at`
 * (ISO 8601), `max_devices` and `grace_days`; `reason_code` names a reason a program acts on
 * (`installation_moved`, `legacy_binding`: docs/identity.md). Judged now; no side effects.
 */
export const licenseStatus = method({
  name: "license_status",
  scope: "read",
  summary: "Shows the license status (no_license when none is installed) and why.",
  params: [ACCOUNT_PARAM],
  result: { type: "object", description: "{status, reason, license_id?, expires_at?, …}" },
  handler: ({ license }) => license.describe(),
});

/**
 * `license_activate [account_id, url]` → the new status, as `license_status`. Binds this device
 * to the license behind the delivery URL (a seat on the license server), verifies and installs
 * it as `privitty.lic`; effective at once. -1 when the server refuses or cannot be reached, or
 * sends a license this gateway cannot accept (nothing is installed then).
 */
export const licenseActivate = method({
  name: "license_activate",
  scope: "admin",
  summary: "Activates a license from its delivery URL (takes effect at once).",
  params: [ACCOUNT_PARAM, { name: "url", type: "string", description: "License delivery URL." }],
  result: { type: "object", description: "The new license status, as license_status." },
  handler: ({ license }, [, url]) => license.activate(url),
});

/**
 * `license_sync [account_id]` → the status after the refresh. Re-fetches the installed license
 * from its delivery URL: a renewal (new expiry, grace reset) or a revocation takes effect at
 * once. -1 with no license installed or when the server refuses or cannot be reached.
 */
export const licenseSync = method({
  name: "license_sync",
  scope: "admin",
  summary: "Refreshes the installed license from its issuer (renewal, revocation).",
  params: [ACCOUNT_PARAM],
  result: { type: "object", description: "The license status after the refresh." },
  handler: ({ license }) => license.sync(),
});

/**
 * `license_deactivate [account_id]` → nothing (204). Frees this device's seat on the license
 * server; the license file stays for inspection but is no longer honoured (status
 * `no_license`). -1 with no license installed or when the server cannot be reached.
 */
export const licenseDeactivate = method({
  name: "license_deactivate",
  scope: "admin",
  summary: "Deactivates the license on this device and frees its seat.",
  params: [ACCOUNT_PARAM],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: ({ license }) => license.deactivate(),
});

/** The license management methods, in documentation order. */
export const LICENSE_METHODS: readonly MethodEntry[] = [
  licenseStatus,
  licenseActivate,
  licenseSync,
  licenseDeactivate,
];
