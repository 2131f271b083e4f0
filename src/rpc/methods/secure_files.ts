/**
 * The protected-file methods (docs/contract.md §4.4, docs/prv-format.md): protect a file for a
 * chat, resolve a
 * `.prv` path to its file id, revoke a peer's access, the state and rules of a file by message
 * id, a renewal request and the owner's answer. Those that protect, send, grant or revoke need
 * an active license (-32001); reading a state or asking for renewal of a received file does not.
 */
import { ChatType } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import { ACCOUNT_PARAM, method, type MethodEntry, type ParamSpec } from "../method.ts";

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
    description: "Access window in minutes from the recipient's receipt; 0 means unlimited.",
  },
  msgId: { name: "msg_id", type: "u32", description: "Message with the .prv file." },
} as const satisfies Record<string, ParamSpec>;

const SEND_RESULT = {
  type: "object",
  description: "PrivittySendFileResult {encrypted_path, plaintext_hash, prv_file_hash, " +
    "file_pdu_b64, otk_pdu_b64, file_id}",
} as const;

/**
 * `secure_send_file [account_id, chat_id, peer_contact_id, plaintext_path, allow_download,
 * allow_forward, duration_minutes]` → PrivittySendFileResult. Encrypts the file (a regular file
 * inside the files directory, opened once: the send_msg file rules) to `<plaintext_path>.prv`,
 * streaming and atomically, splits its key for the peer and signs the file_pdu and otk_pdu;
 * `send_msg` with `encrypted_path` then sends the `.prv` with its PDUs. -1 for a file the rules
 * refuse (naming the rule and the files directory; nothing is written), an unknown chat, or a
 * peer that is not the chat's member.
 */
export const secureSendFile = method({
  name: "secure_send_file",
  scope: "send",
  summary: "Encrypts a file with access rules for a 1:1 chat (license required).",
  params: [ACCOUNT_PARAM, P.chatId, P.peer, P.path, P.download, P.forward, P.minutes],
  result: SEND_RESULT,
  license: true,
  handler: (s, [, chatId, peer, path, download, forward, minutes]) =>
    s.core.protectedFiles.protect({
      chatId,
      peerContactId: peer,
      plaintextPath: path,
      rules: {
        allow_download: download,
        allow_forward: forward,
        duration_minutes: minutes,
      },
      roots: { filesDir: s.config.filesDir, dataDir: s.config.dataDir },
      method: "secure_send_file",
    }),
});

/**
 * `secure_send_group_file [account_id, chat_id, plaintext_path, allow_download, allow_forward,
 * duration_minutes]` → PrivittySendFileResult, for every member of a group chat: one S1 per
 * member; `send_msg` puts the file_pdu in the group mail and each member's otk_pdu and first
 * grant in a mail encrypted to that member alone. -1 for a chat that is not a group.
 */
export const secureSendGroupFile = method({
  name: "secure_send_group_file",
  scope: "send",
  summary: "Encrypts a file with access rules for a group chat (license required).",
  params: [ACCOUNT_PARAM, P.chatId, P.path, P.download, P.forward, P.minutes],
  result: SEND_RESULT,
  license: true,
  handler(s, [, chatId, path, download, forward, minutes]) {
    const chat = s.core.chats.require(chatId);
    if (chat.type !== ChatType.GROUP) {
      throw new GatewayError(
        `secure_send_group_file: chat ${chat.id} is not a group chat; use secure_send_file for ` +
          `a 1:1 chat`,
      );
    }
    return s.core.protectedFiles.protect({
      chatId: chat.id,
      plaintextPath: path,
      rules: {
        allow_download: download,
        allow_forward: forward,
        duration_minutes: minutes,
      },
      roots: { filesDir: s.config.filesDir, dataDir: s.config.dataDir },
      method: "secure_send_group_file",
    });
  },
});

/**
 * `secure_get_file_id_by_path [account_id, file_path]` → file id: the `encrypted_path`
 * secure_send_file returned, or the `.prv` path get_messages shows (sent or received). -1 for
 * any other path.
 */
export const secureGetFileIdByPath = method({
  name: "secure_get_file_id_by_path",
  scope: "read",
  summary: "Resolves the protected file id of a .prv path, before revocation (license required).",
  params: [ACCOUNT_PARAM, {
    name: "file_path",
    type: "string",
    description:
      "Path of the .prv file, as in the message's file field or secure_send_file's result.",
  }],
  result: { type: "u32", description: "The file id." },
  license: true,
  handler: (s, [, path]) => s.core.protectedFiles.fileIdByPath(path),
});

/**
 * `secure_revoke_file_access [account_id, chat_id, file_id, peer_contact_id]` → nothing (204).
 * This gateway grants the peer nothing more and sends a revoke: the peer's gateway drops its
 * shares, ends running streams of the file and reports `revoked`.
 * `PrivittyFileAccessRevoked{chat_id, contact_id, file_id}` follows. -1 for an unknown file, a
 * chat it was not sent in, or a contact that is not its recipient.
 */
export const secureRevokeFileAccess = method({
  name: "secure_revoke_file_access",
  scope: "send",
  summary: "Revokes a peer's access to a file sent earlier (license required).",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32", description: "Chat the file was sent in." },
    { name: "file_id", type: "u32", description: "From secure_get_file_id_by_path." },
    { name: "peer_contact_id", type: "u32", description: "Peer whose access ends." },
  ],
  result: { type: "null", description: "Nothing" },
  void: true,
  license: true,
  handler: (s, [, chatId, fileId, peer]) =>
    s.core.protectedFiles.owner.revoke(chatId, fileId, peer),
});

/**
 * `secure_get_file_status [account_id, msg_id]` → `{file_id, msg_id, chat_id, role, state,
 * reason, allow_download, allow_forward, duration_minutes, expires_at, file_name, file_size,
 * recipients?}`: `state` is one of active, requested, expired, revoked, denied, deleted,
 * waiting_owner_action, not_found; the owner's `recipients` are `{contact_id, state,
 * forwarded_by}` (`forwarded_by`: the recipient whose forward added it, 0 for none). Not gated
 * (reading what one holds). -1 for a message without a `.prv`.
 */
export const secureGetFileStatus = method({
  name: "secure_get_file_status",
  scope: "read",
  summary: "The access state and rules of a message's protected file.",
  params: [ACCOUNT_PARAM, P.msgId],
  result: { type: "object", description: "{file_id, state, reason, allow_download, …}" },
  handler: (s, [, msgId]) => s.core.protectedFiles.status(msgId),
});

/**
 * `secure_request_file_access [account_id, msg_id]` → nothing (204): asks the owner to renew
 * access to an expired (or denied) received file; its state becomes `waiting_owner_action`
 * and the owner sees `PrivittyAccessRenewRequested`. Not gated. -1 in any other state.
 */
export const secureRequestFileAccess = method({
  name: "secure_request_file_access",
  scope: "send",
  summary: "Asks the owner to renew access to an expired received file.",
  params: [ACCOUNT_PARAM, P.msgId],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, msgId]) => s.core.protectedFiles.requestRenewal(msgId),
});

/**
 * `secure_respond_access_request [account_id, file_id, contact_id, grant]` → nothing (204): the
 * owner grants (a new window of the file's duration, from now) or denies a pending renewal.
 * `PrivittyFileAccessChanged{chat_id, file_id}` follows on both sides. License required.
 */
export const secureRespondAccessRequest = method({
  name: "secure_respond_access_request",
  scope: "send",
  summary: "Grants or denies a recipient's pending renewal request (license required).",
  params: [
    ACCOUNT_PARAM,
    { name: "file_id", type: "u32", description: "A file this gateway protected." },
    { name: "contact_id", type: "u32", description: "The recipient who asked." },
    { name: "grant", type: "bool", description: "true grants a new window, false denies." },
  ],
  result: { type: "null", description: "Nothing" },
  void: true,
  license: true,
  handler: (s, [, fileId, contactId, grant]) =>
    s.core.protectedFiles.owner.respondRenewal(
      fileId,
      contactId,
      grant,
    ),
});

/** The protected-file methods, in documentation order. */
export const SECURE_FILE_METHODS: readonly MethodEntry[] = [
  secureSendFile,
  secureSendGroupFile,
  secureGetFileIdByPath,
  secureRevokeFileAccess,
  secureGetFileStatus,
  secureRequestFileAccess,
  secureRespondAccessRequest,
];
