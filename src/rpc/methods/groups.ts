/**
 * Group RPC methods with Delta Chat's names, params and results: `create_group_chat`,
 * `add_contact_to_chat`, `remove_contact_from_chat`, `leave_group`, `set_chat_name`,
 * `set_chat_profile_image`, `get_past_chat_contacts` (core/groups/groups.ts does the work).
 */
import { mimeOf } from "../../core/blobs.ts";
import { attachmentRoots, type FileUse, openAttachableFile } from "../../core/file_access.ts";
import { GatewayError } from "../../errors.ts";
import { ACCOUNT_PARAM, method, type MethodEntry, type ParamSpec } from "../method.ts";

const CHAT_ID = {
  name: "chat_id",
  type: "u32",
  description: "A group chat.",
} as const satisfies ParamSpec;
const CONTACT_ID = {
  name: "contact_id",
  type: "u32",
  description: "A contact.",
} as const satisfies ParamSpec;

/**
 * `create_group_chat [account_id, name, protect]` → chat id of a new group (type 120) with
 * you as its only member; `protect` is accepted and ignored (every group is encrypted). Nothing
 * is sent until the first message, which announces the group with its members (as Delta Chat).
 * Events: `MsgsChanged{0,0}`, `ChatModified`. An empty name → -1.
 */
export const createGroupChat = method({
  name: "create_group_chat",
  scope: "send",
  summary: "Creates an encrypted group with you as its only member.",
  params: [
    ACCOUNT_PARAM,
    { name: "name", type: "string", description: "The group name." },
    { name: "protect", type: "any", description: "Accepted and ignored (Delta Chat's)." },
  ],
  result: { type: "u32", description: "The group's chat id." },
  handler: (s, [, name]) => s.core.groups.create(name),
});

/**
 * `add_contact_to_chat [account_id, chat_id, contact_id]` → nothing (HTTP 204). Only contacts
 * with a key can be added (else -1 saying why). Every member, the new one included, gets a
 * member-added message with every member's key. Events: `ChatModified`, `MsgsChanged`.
 */
export const addContactToChat = method({
  name: "add_contact_to_chat",
  scope: "send",
  summary: "Adds a contact with a key to a group and tells every member.",
  params: [ACCOUNT_PARAM, CHAT_ID, CONTACT_ID],
  result: { type: "null", description: "Nothing" },
  void: true,
  async handler(s, [, chatId, contactId]) {
    await s.core.groups.addMember(chatId, contactId);
  },
});

/**
 * `remove_contact_from_chat [account_id, chat_id, contact_id]` → nothing (HTTP 204). 1 (you)
 * leaves the group. The remaining members and the removed one get a member-removed message.
 */
export const removeContactFromChat = method({
  name: "remove_contact_from_chat",
  scope: "send",
  summary: "Removes a member from a group (1: leave it) and tells the members.",
  params: [ACCOUNT_PARAM, CHAT_ID, CONTACT_ID],
  result: { type: "null", description: "Nothing" },
  void: true,
  async handler(s, [, chatId, contactId]) {
    await s.core.groups.removeMember(chatId, contactId);
  },
});

/**
 * `leave_group [account_id, chat_id]` → nothing (HTTP 204): leaves a group (the members are
 * told; we can no longer send) or a channel we subscribe to (its owner alone is told; its posts
 * no longer open).
 */
export const leaveGroup = method({
  name: "leave_group",
  scope: "send",
  summary: "Leaves a group or a channel you subscribe to.",
  params: [ACCOUNT_PARAM, CHAT_ID],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, chatId]) => s.core.leave(chatId),
});

/**
 * `create_broadcast [account_id, chat_name]` → chat id of a new channel we own (chatType 130,
 * `channelRole: "owner"`). Subscribers join only by its invite
 * (`get_chat_securejoin_qr_code(1, chat_id)`); `send_msg` posts to every subscriber as Delta
 * Chat 2.x channel posts (encrypted with the channel's secret); their replies arrive in their
 * 1:1 chats. Events: `MsgsChanged{0,0}`, `ChatModified`.
 */
export const createBroadcast = method({
  name: "create_broadcast",
  scope: "send",
  summary: "Creates a broadcast channel you own; people subscribe by its invite.",
  params: [ACCOUNT_PARAM, { name: "chat_name", type: "string", description: "Its name." }],
  result: { type: "u32", description: "The channel's chat id." },
  handler: (s, [, name]) => s.core.channels.create(name),
});

/** `set_chat_name [account_id, chat_id, new_name]` → nothing (HTTP 204); every member follows. */
export const setChatName = method({
  name: "set_chat_name",
  scope: "send",
  summary: "Renames a group for every member.",
  params: [ACCOUNT_PARAM, CHAT_ID, { name: "new_name", type: "string", description: "Name." }],
  result: { type: "null", description: "Nothing" },
  void: true,
  async handler(s, [, chatId, name]) {
    await s.core.groups.rename(chatId, name);
  },
});

const AVATAR_USE: FileUse = { method: "set_chat_profile_image", verb: "used as group images" };

/**
 * `set_chat_profile_image [account_id, chat_id, image_path|null]` → nothing (HTTP 204). The
 * image (a file inside the files directory, or a stored blob) becomes the group avatar for
 * every member; null removes it. `profileImage` of the chat then gives its blob path.
 */
export const setChatProfileImage = method({
  name: "set_chat_profile_image",
  scope: "send",
  summary: "Sets (a file path) or removes (null) the group image for every member.",
  params: [
    ACCOUNT_PARAM,
    CHAT_ID,
    { name: "image_path", type: "string?", description: "An image file, or null to remove." },
  ],
  result: { type: "null", description: "Nothing" },
  void: true,
  async handler(s, [, chatId, path]) {
    const groups = s.core.groups;
    groups.requireGroup(chatId);
    if (path === null) return await groups.setAvatar(chatId, null);
    await using file = await openAttachableFile(
      path,
      attachmentRoots(s.config),
      AVATAR_USE,
    );
    const mime = mimeOf(file.name);
    if (!mime.startsWith("image/")) {
      throw new GatewayError(`set_chat_profile_image: "${path}" is not an image (${mime})`);
    }
    await groups.setAvatar(chatId, {
      bytes: await file.readAll(),
      name: file.name,
      mime,
    });
  },
});

/** `get_past_chat_contacts [account_id, chat_id]` → contacts removed within the last 60 days. */
export const getPastChatContacts = method({
  name: "get_past_chat_contacts",
  scope: "read",
  summary: "Contacts removed from a group within the last 60 days.",
  params: [ACCOUNT_PARAM, CHAT_ID],
  result: { type: "array<u32>", description: "Contact ids." },
  handler: (s, [, chatId]) => s.core.chats.pastMemberIds(chatId),
});

/** The group methods, in documentation order. */
export const GROUP_METHODS: readonly MethodEntry[] = [
  createGroupChat,
  addContactToChat,
  removeContactFromChat,
  leaveGroup,
  createBroadcast,
  setChatName,
  setChatProfileImage,
  getPastChatContacts,
];
