/**
 * Names of the chat-mail protocol the gateway speaks with Delta Chat 2.x, in one place: header
 * names (`Chat-*`, `Secure-Join*`, `Autocrypt*`), viewtypes, download states, system-message
 * kinds, the SecureJoin steps with their parser and the key's notation names. A leaf module: it
 * imports nothing.
 */

/**
 * Header names as Delta Chat writes them. Look-ups are case-insensitive (`MimeHeaders.get`), so
 * readers and writers use the same constant.
 */
export const Header = {
  FROM: "From",
  TO: "To",
  SUBJECT: "Subject",
  DATE: "Date",
  MESSAGE_ID: "Message-ID",
  IN_REPLY_TO: "In-Reply-To",
  REFERENCES: "References",
  CONTENT_TYPE: "Content-Type",
  CONTENT_DISPOSITION: "Content-Disposition",
  AUTO_SUBMITTED: "Auto-Submitted",
  /** Broadcast lists up to Delta Chat 2.23 (still read before `Chat-List-ID`). */
  LIST_ID: "List-ID",

  AUTOCRYPT: "Autocrypt",
  AUTOCRYPT_GOSSIP: "Autocrypt-Gossip",

  CHAT_VERSION: "Chat-Version",
  CHAT_CONTENT: "Chat-Content",
  CHAT_DISPOSITION_NOTIFICATION_TO: "Chat-Disposition-Notification-To",
  CHAT_EDIT: "Chat-Edit",
  CHAT_DELETE: "Chat-Delete",
  CHAT_VOICE_MESSAGE: "Chat-Voice-Message",
  CHAT_POST_MESSAGE_ID: "Chat-Post-Message-ID",
  CHAT_POST_MESSAGE_METADATA: "Chat-Post-Message-Metadata",
  CHAT_IS_POST_MESSAGE: "Chat-Is-Post-Message",
  CHAT_USER_AVATAR: "Chat-User-Avatar",

  CHAT_GROUP_ID: "Chat-Group-ID",
  CHAT_GROUP_NAME: "Chat-Group-Name",
  CHAT_GROUP_NAME_TIMESTAMP: "Chat-Group-Name-Timestamp",
  CHAT_GROUP_NAME_CHANGED: "Chat-Group-Name-Changed",
  CHAT_GROUP_AVATAR: "Chat-Group-Avatar",
  CHAT_GROUP_DESCRIPTION: "Chat-Group-Description",
  CHAT_GROUP_DESCRIPTION_TIMESTAMP: "Chat-Group-Description-Timestamp",
  CHAT_GROUP_DESCRIPTION_CHANGED: "Chat-Group-Description-Changed",
  CHAT_GROUP_MEMBER_ADDED: "Chat-Group-Member-Added",
  CHAT_GROUP_MEMBER_ADDED_FPR: "Chat-Group-Member-Added-Fpr",
  CHAT_GROUP_MEMBER_REMOVED: "Chat-Group-Member-Removed",
  CHAT_GROUP_MEMBER_REMOVED_FPR: "Chat-Group-Member-Removed-Fpr",
  CHAT_GROUP_MEMBER_TIMESTAMPS: "Chat-Group-Member-Timestamps",
  CHAT_GROUP_MEMBER_FPR: "Chat-Group-Member-Fpr",
  CHAT_GROUP_PAST_MEMBERS: "Chat-Group-Past-Members",
  CHAT_LIST_ID: "Chat-List-ID",
  CHAT_BROADCAST_SECRET: "Chat-Broadcast-Secret",

  SECURE_JOIN: "Secure-Join",
  SECURE_JOIN_INVITENUMBER: "Secure-Join-Invitenumber",
  SECURE_JOIN_AUTH: "Secure-Join-Auth",
  SECURE_JOIN_FINGERPRINT: "Secure-Join-Fingerprint",
  SECURE_JOIN_GROUP: "Secure-Join-Group",

  EPHEMERAL_TIMER: "Ephemeral-Timer",
  /** A gateway's request for an automatic delivery receipt (ignored by Delta Chat). */
  EDGE_DELIVERY_RECEIPT_TO: "Edge-Delivery-Receipt-To",
  /**
   * One signed protected-file PDU (docs/prv-format.md), inside the encrypted part; may repeat:
   * with a `.prv` on its chat message, or alone on a hidden PDU mail. Ignored by Delta Chat.
   */
  EDGE_PRV_PDU: "Edge-Prv-Pdu",
  /**
   * What a gateway can do, announced inside the encrypted part of every chat mail it sends
   * (tokens from `Capability`); stored per contact. Ignored by Delta Chat.
   */
  EDGE_CAPABILITIES: "Edge-Capabilities",
  /** On the chat message of a file sent in parts: the transfer (docs/transfer.md). */
  EDGE_TRANSFER: "Edge-Transfer",
  /** On a hidden part mail: which transfer and which part (docs/transfer.md). */
  EDGE_TRANSFER_PART: "Edge-Transfer-Part",
  /** On a hidden control mail: parts asked for again, done, refused (docs/transfer.md). */
  EDGE_TRANSFER_CONTROL: "Edge-Transfer-Control",
  /**
   * On a hidden direct-path mail: the sender's QUIC offer, the receiver's answer or its decline;
   * the offer or answer is the JSON body (docs/transfer.md#direct-path, docs/p2p.md).
   */
  EDGE_TRANSFER_DIRECT: "Edge-Transfer-Direct",
} as const;

/** Tokens of `Header.EDGE_CAPABILITIES`. */
export const Capability = {
  /** Receives files above the relay's one-mail limit as relay parts (docs/transfer.md). */
  LARGE_FILES: "large-files-1",
} as const;

/** What a `Header.EDGE_TRANSFER_CONTROL` mail says (docs/transfer.md). */
export const TransferAction = {
  /** The receiver asks again for the parts it lists. */
  REQUEST: "request",
  /** The receiver verified the whole file and showed the message. */
  DONE: "done",
  /** The receiver will not take the file (too large, no disk space, hash mismatch). */
  REFUSED: "refused",
} as const;
export type TransferAction = typeof TransferAction[keyof typeof TransferAction];

/** What a `Header.EDGE_TRANSFER_DIRECT` mail says (docs/transfer.md#direct-path). */
export const DirectAction = {
  /** The sender offers the file over QUIC (body: its candidates, pin and token). */
  OFFER: "offer",
  /** The receiver takes the offer (body: its own candidates, pin and token). */
  ANSWER: "answer",
  /** The receiver will not connect (its direct path is off, or the offer was refused). */
  DECLINE: "decline",
} as const;
export type DirectAction = typeof DirectAction[keyof typeof DirectAction];
export type Header = typeof Header[keyof typeof Header];

/** `Chat-Version` value of every chat mail. */
export const CHAT_VERSION = "1.0";

/** Delta Chat viewtype names. */
export const Viewtype = {
  TEXT: "Text",
  IMAGE: "Image",
  GIF: "Gif",
  STICKER: "Sticker",
  AUDIO: "Audio",
  VOICE: "Voice",
  VIDEO: "Video",
  FILE: "File",
  WEBXDC: "Webxdc",
  VCARD: "Vcard",
} as const;
export type Viewtype = typeof Viewtype[keyof typeof Viewtype];

/** Delta Chat download states (`downloadState`). */
export const DownloadState = {
  DONE: "Done",
  AVAILABLE: "Available",
  FAILURE: "Failure",
  UNDECIPHERABLE: "Undecipherable",
  IN_PROGRESS: "InProgress",
} as const;
export type DownloadState = typeof DownloadState[keyof typeof DownloadState];

/** Delta Chat's `SystemMessage` names of info messages (`systemMessageType`). */
export const SystemMessage = {
  MEMBER_ADDED: "MemberAddedToGroup",
  MEMBER_REMOVED: "MemberRemovedFromGroup",
  GROUP_NAME_CHANGED: "GroupNameChanged",
  GROUP_IMAGE_CHANGED: "GroupImageChanged",
  GROUP_DESCRIPTION_CHANGED: "GroupDescriptionChanged",
  EPHEMERAL_TIMER_CHANGED: "EphemeralTimerChanged",
  LOCATION_STREAMING_ENABLED: "LocationStreamingEnabled",
  PROTECTION_ENABLED: "ChatProtectionEnabled",
  PROTECTION_DISABLED: "ChatProtectionDisabled",
  CALL_ACCEPTED: "CallAccepted",
  CALL_ENDED: "CallEnded",
  MESSAGE_PINNED: "MessagePinned",
  MESSAGE_UNPINNED: "MessageUnpinned",
  SECUREJOIN_MESSAGE: "SecurejoinMessage",
} as const;
export type SystemMessage = typeof SystemMessage[keyof typeof SystemMessage];

/** `Chat-Content` values of system messages and what they are (mimeparser.rs). */
export const CHAT_CONTENT_SYSTEM: Readonly<Record<string, SystemMessage>> = {
  "location-streaming-enabled": SystemMessage.LOCATION_STREAMING_ENABLED,
  "ephemeral-timer-changed": SystemMessage.EPHEMERAL_TIMER_CHANGED,
  "protection-enabled": SystemMessage.PROTECTION_ENABLED,
  "protection-disabled": SystemMessage.PROTECTION_DISABLED,
  "group-avatar-changed": SystemMessage.GROUP_IMAGE_CHANGED,
  "call-accepted": SystemMessage.CALL_ACCEPTED,
  "call-ended": SystemMessage.CALL_ENDED,
  "message-pinned": SystemMessage.MESSAGE_PINNED,
  "message-unpinned": SystemMessage.MESSAGE_UNPINNED,
};

/** `Chat-Content` value of an avatar change. */
export const CHAT_CONTENT_GROUP_AVATAR_CHANGED = "group-avatar-changed";

/**
 * OpenPGP notation names on the account key. `RELAYS` sits on the key's direct-key signature: the
 * owner's relay addresses, comma-separated (at most {@link MAX_KEY_RELAYS}). Delta Chat sends to
 * every address listed, and a joiner that already has the key skips SecureJoin's first two steps
 * when every invite address is listed (docs/protocol-notes.md §2, §6.3).
 */
export const KeyNotation = {
  RELAYS: "relays@chatmail.at",
} as const;
export type KeyNotation = typeof KeyNotation[keyof typeof KeyNotation];

/** Most relay addresses Delta Chat reads from a `relays@chatmail.at` notation. */
export const MAX_KEY_RELAYS = 5;

/** Every SecureJoin step name (docs/protocol-notes.md §6.2, §8). */
export const SecureJoinStep = {
  /** Joiner → inviter, plaintext: the invite number of a 1:1 invite. */
  VC_REQUEST: "vc-request",
  /** Joiner → inviter, plaintext: the invite number of a group or channel invite. */
  VG_REQUEST: "vg-request",
  VC_AUTH_REQUIRED: "vc-auth-required",
  VG_AUTH_REQUIRED: "vg-auth-required",
  VC_REQUEST_WITH_AUTH: "vc-request-with-auth",
  VG_REQUEST_WITH_AUTH: "vg-request-with-auth",
  VC_CONTACT_CONFIRM: "vc-contact-confirm",
  /** The group's member-added message, sent to every member, ends a group join. */
  VG_MEMBER_ADDED: "vg-member-added",
  /** SecureJoin v3: the joiner's symmetric request for the inviter's key (any invite kind). */
  VC_REQUEST_PUBKEY: "vc-request-pubkey",
  VC_PUBKEY: "vc-pubkey",
  /** Old multi-device acknowledgements; ignored. */
  VC_CONTACT_CONFIRM_RECEIVED: "vc-contact-confirm-received",
  VG_MEMBER_ADDED_RECEIVED: "vg-member-added-received",
} as const;
export type SecureJoinStep = typeof SecureJoinStep[keyof typeof SecureJoinStep];

const STEPS: ReadonlySet<string> = new Set(Object.values(SecureJoinStep));

/**
 * A `Secure-Join` header value as a step: trimmed and lower-cased; undefined when absent, empty
 * or not a step this protocol knows (such mail is not a SecureJoin step).
 */
export function parseSecureJoinStep(value: string | undefined): SecureJoinStep | undefined {
  const v = value?.trim().toLowerCase() ?? "";
  return STEPS.has(v) ? v as SecureJoinStep : undefined;
}

/** True for the two plaintext first steps (the only unencrypted mail the gateway accepts). */
export function isSecureJoinRequest(
  step: SecureJoinStep | undefined,
): step is "vc-request" | "vg-request" {
  return step === SecureJoinStep.VC_REQUEST || step === SecureJoinStep.VG_REQUEST;
}

/** True for steps of a group or channel join (`vg-*`). */
export function isGroupStep(step: SecureJoinStep): boolean {
  return step.startsWith("vg-");
}
