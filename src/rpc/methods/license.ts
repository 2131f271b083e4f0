/**
 * License RPC methods (`license_status`, `license_activate`, `license_sync`,
 * `license_deactivate`) and the license-gated `secure_*` file-protection family (SPEC §4, §5).
 */
import { GatewayError } from "../../errors.ts";
import type { LicenseSource } from "../../license/manager.ts";
import { ACCOUNT_PARAM, type MethodEntry, type ParamSpec } from "../method.ts";

/**
 * `license_status [account_id]` → `{status, reason, device_id, ...}`.
 * `status` is `no_license`, `active`, `grace_period`, `expired`, `clock_tampered` or `invalid`;
 * a verified license adds `license_id`, `license_type`, `customer`, `issued_at`, `expires_at`
 * (ISO 8601), `max_devices` and `grace_days`. Judged now; no side effects.
 */
export const licenseStatus: MethodEntry = {
  name: "license_status",
  summary: "Shows the license status (no_license when none is installed) and why.",
  params: [ACCOUNT_PARAM],
  result: { type: "object", description: "{status, reason, license_id?, expires_at?, …}" },
  handler: ({ license }) => license.describe?.() ?? { status: license.status() },
};

/** The license source's management, or -1 saying this gateway cannot manage its license. */
function managed<K extends "activate" | "sync" | "deactivate">(
  license: LicenseSource,
  op: K,
): NonNullable<LicenseSource[K]> {
  const fn = license[op];
  if (fn === undefined) throw new GatewayError(`license ${op} is not available in this gateway`);
  return fn.bind(license) as NonNullable<LicenseSource[K]>;
}

/**
 * `license_activate [account_id, url]` → the new status, as `license_status`. Binds this device
 * to the license behind the delivery URL (a seat on the license server), verifies and installs
 * it as `privitty.lic`; effective at once. -1 when the server refuses or cannot be reached, or
 * sends a license this gateway cannot accept (nothing is installed then).
 */
export const licenseActivate: MethodEntry = {
  name: "license_activate",
  summary: "Activates a license from its delivery URL (takes effect at once).",
  params: [ACCOUNT_PARAM, { name: "url", type: "string", description: "License delivery URL." }],
  result: { type: "object", description: "The new license status, as license_status." },
  handler: ({ license }, [, url]) => managed(license, "activate")(url as string),
};

/**
 * `license_sync [account_id]` → the status after the refresh. Re-fetches the installed license
 * from its delivery URL: a renewal (new expiry, grace reset) or a revocation takes effect at
 * once. -1 with no license installed or when the server refuses or cannot be reached.
 */
export const licenseSync: MethodEntry = {
  name: "license_sync",
  summary: "Refreshes the installed license from its issuer (renewal, revocation).",
  params: [ACCOUNT_PARAM],
  result: { type: "object", description: "The license status after the refresh." },
  handler: ({ license }) => managed(license, "sync")(),
};

/**
 * `license_deactivate [account_id]` → nothing (204). Frees this device's seat on the license
 * server; the license file stays for inspection but is no longer honoured (status
 * `no_license`). -1 with no license installed or when the server cannot be reached.
 */
export const licenseDeactivate: MethodEntry = {
  name: "license_deactivate",
  summary: "Deactivates the license on this device and frees its seat.",
  params: [ACCOUNT_PARAM],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: ({ license }) => managed(license, "deactivate")(),
};

const P = {
  chatId: { name: "chat_id", type: "u32", description: "Chat to send the file to." },
  peer: { name: "peer_contact_id", type: "u32", description: "The peer of the 1:1 chat." },
  path: {
    name: "plaintext_path",
    type: "string",
    description: "Absolute path of the file on the daemon host; <path>.prv is written beside it.",
  },
  download: { name: "allow_download", type: "bool", description: "Recipient may save it." },
  forward: { name: "allow_forward", type: "bool", description: "Recipient may forward it." },
  minutes: {
    name: "duration_minutes",
    type: "i32",
    description: "Access window in minutes; 0 means unlimited.",
  },
} as const satisfies Record<string, ParamSpec>;

const SEND_RESULT = {
  type: "object",
  description: "PrivittySendFileResult {encrypted_path, plaintext_hash, prv_file_hash, " +
    "file_pdu_b64, otk_pdu_b64, file_id}",
} as const;

/** A gated entry whose handler is not in this build (the gate answers -32001 first anyway). */
function pending(entry: Omit<MethodEntry, "handler" | "license">): MethodEntry {
  return {
    ...entry,
    license: true,
    handler() {
      throw new GatewayError(
        `${entry.name} is not available in this build yet: protected files land with the ` +
          `license issue`,
      );
    },
  };
}

/**
 * The `secure_*` file-protection family; every one requires an active license (-32001).
 * `secure_send_file`/`secure_send_group_file` encrypt `plaintext_path` to `<path>.prv` (then
 * `send_msg` sends it); `secure_revoke_file_access` revokes a peer's access (returns nothing:
 * HTTP 204); `secure_get_file_id_by_path` resolves a `.prv` path to its file id.
 */
export const SECURE_FILE_METHODS: readonly MethodEntry[] = [
  pending({
    name: "secure_send_file",
    summary: "Encrypts a file with access rules for a 1:1 chat (license required).",
    params: [ACCOUNT_PARAM, P.chatId, P.peer, P.path, P.download, P.forward, P.minutes],
    result: SEND_RESULT,
  }),
  pending({
    name: "secure_send_group_file",
    summary: "Encrypts a file with access rules for a group chat (license required).",
    params: [ACCOUNT_PARAM, P.chatId, P.path, P.download, P.forward, P.minutes],
    result: SEND_RESULT,
  }),
  pending({
    name: "secure_get_file_id_by_path",
    summary: "Resolves the protected file id of a .prv path, before revocation (license required).",
    params: [ACCOUNT_PARAM, {
      name: "file_path",
      type: "string",
      description: "Path of the .prv file, as in the message's file field.",
    }],
    result: { type: "u32", description: "The file id." },
  }),
  pending({
    name: "secure_revoke_file_access",
    summary: "Revokes a peer's access to a file sent earlier (license required).",
    params: [
      ACCOUNT_PARAM,
      { name: "chat_id", type: "u32", description: "Chat the file was sent in." },
      { name: "file_id", type: "u32", description: "From secure_get_file_id_by_path." },
      { name: "peer_contact_id", type: "u32", description: "Peer whose access ends." },
    ],
    result: { type: "null", description: "Nothing" },
    void: true,
  }),
];

/** The license management methods, in documentation order. */
export const LICENSE_METHODS: readonly MethodEntry[] = [
  licenseStatus,
  licenseActivate,
  licenseSync,
  licenseDeactivate,
  ...SECURE_FILE_METHODS,
];
