/**
 * License RPC methods (`license_status`, `license_activate`, `license_sync`,
 * `license_deactivate`) and the license-gated `secure_*` file-protection family (SPEC §4, §5).
 */
import { LicenseStatus } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import { ACCOUNT_PARAM, type MethodEntry, type ParamSpec } from "../method.ts";

/**
 * `license_status [account_id]` → `{status, ...}`.
 * `status` is `no_license`, `active`, `expired` or `invalid`; with a license file the object
 * also has `license_id`, `license_type`, `expires_at` (ISO 8601) and `max_devices`.
 * Reads the already loaded license; no side effects.
 */
export const licenseStatus: MethodEntry = {
  name: "license_status",
  summary: "Shows the license status (no_license when none is installed).",
  params: [ACCOUNT_PARAM],
  result: { type: "object", description: "{status, license_id?, license_type?, expires_at?, …}" },
  handler: ({ license }) => license.describe?.() ?? { status: license.status() },
};

const NOT_IN_BUILD = "is not implemented in this build yet; it lands with the license issue";

/**
 * `license_activate [account_id, url]` → not available: answers -1 saying so.
 * (Activation at start from `EDGE_LICENSE_URL` is part of provisioning.)
 */
export const licenseActivate: MethodEntry = {
  name: "license_activate",
  summary: "Activates a license from its delivery URL.",
  params: [ACCOUNT_PARAM, { name: "url", type: "string", description: "License delivery URL." }],
  result: { type: "object", description: "The new license status, as license_status." },
  handler() {
    throw new GatewayError(`license activation ${NOT_IN_BUILD}`);
  },
};

/** Throws -1 "no license is installed" when there is none; says what to do instead. */
function requireInstalled(license: { status(): string }, action: string): void {
  if (license.status() === LicenseStatus.NO_LICENSE) {
    throw new GatewayError(
      `cannot ${action} the license: no license is installed (status no_license); ` +
        `activate one with: edge-gateway license activate <url>`,
    );
  }
}

/** `license_sync [account_id]` → -1: no license installed, or sync not in this build. */
export const licenseSync: MethodEntry = {
  name: "license_sync",
  summary: "Refreshes the installed license from its issuer.",
  params: [ACCOUNT_PARAM],
  result: { type: "object", description: "The license status after the refresh." },
  handler({ license }) {
    requireInstalled(license, "sync");
    throw new GatewayError(`license sync ${NOT_IN_BUILD}`);
  },
};

/** `license_deactivate [account_id]` → -1: no license installed, or not in this build. */
export const licenseDeactivate: MethodEntry = {
  name: "license_deactivate",
  summary: "Deactivates the license on this device.",
  params: [ACCOUNT_PARAM],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler({ license }) {
    requireInstalled(license, "deactivate");
    throw new GatewayError(`license deactivation ${NOT_IN_BUILD}`);
  },
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
