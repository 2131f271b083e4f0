/**
 * Delta Chat's methods that change our sent messages for everyone: `send_edit_request` and
 * `delete_messages_for_all` (core/send/controls.ts). Edits and deletes peers send arrive by mail
 * (core/receive/controls.ts).
 */
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";

/**
 * `send_edit_request [account_id, message_id, new_text]` → nothing (HTTP 204). Our message's
 * text becomes `new_text` here (`MsgsChanged`, `isEdited`) and on the peers' devices.
 */
export const sendEditRequest = method({
  name: "send_edit_request",
  scope: "send",
  summary: "Replaces the text of one of our sent messages, here and for the chat's members.",
  params: [
    ACCOUNT_PARAM,
    { name: "message_id", type: "u32", description: "One of our sent messages with text." },
    { name: "new_text", type: "string", description: "The new text (not empty)." },
  ],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, id, text]) => s.core.controls.edit(id, text),
});

/**
 * `delete_messages_for_all [account_id, message_ids]` → nothing (HTTP 204). Deletes our sent
 * messages here (`MsgDeleted`) and asks each chat's members to delete them too.
 */
export const deleteMessagesForAll = method({
  name: "delete_messages_for_all",
  scope: "send",
  summary: "Deletes our sent messages here and on the chat members' devices.",
  params: [
    ACCOUNT_PARAM,
    { name: "message_ids", type: "array<u32>", description: "Our sent messages." },
  ],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, ids]) => s.core.controls.deleteForAll(ids),
});

/** The methods that change sent messages. */
export const MESSAGE_EDIT_METHODS: readonly MethodEntry[] = [
  sendEditRequest,
  deleteMessagesForAll,
];
