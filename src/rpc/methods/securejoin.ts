/**
 * SecureJoin RPC methods (docs/contract.md §4.4): `get_chat_securejoin_qr_code` makes a 1:1 invite
 * link,
 * `secure_join` starts joining a peer's link and returns the chat id at once; the handshake runs
 * in the background and reports `SecurejoinInviterProgress` / `SecurejoinJoinerProgress` events.
 */
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";

/**
 * `get_chat_securejoin_qr_code [account_id, chat_id|null]` → invite link
 * `OPENPGP4FPR:<FPR>#a=<addr>&n=<name>[&g=<group>&x=<group id>]&i=<invite>&s=<auth>` (a new
 * auth token per call, no `v=3`, so every Delta Chat 2.x joins). null: a 1:1 invite; a group
 * chat id: an invite to that group (Delta Chat shows "join group"); the joiner becomes a member
 * and every member gets the member-added message. A chat that is no group of ours → -1.
 */
export const getChatSecurejoinQrCode = method({
  name: "get_chat_securejoin_qr_code",
  scope: "send",
  summary: "Creates an invite link (OPENPGP4FPR:…): 1:1 with null, else to join the group.",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32?", description: "null for a 1:1 invite, or a group chat id." },
  ],
  result: { type: "string", description: "The invite link." },
  handler: (s, [, chatId]) => s.core.secureJoin.createInvite(chatId ?? 0),
});

/**
 * `secure_join [account_id, link]` → chat id of the 1:1 chat with the inviter, or for a group
 * invite (`…&x=<group id>&g=<name>`, Delta Chat's too) the group's chat id, at once; we become a
 * member when the inviter's member-added arrives. Accepts `OPENPGP4FPR:…` and
 * `https://i.delta.chat/#…`. Malformed link → -32602 saying what is wrong; own link → -1.
 * Events: `ContactsChanged`, `ChatModified`, then `SecurejoinJoinerProgress` 400 and 1000 (with
 * the chat's id and type) as the handshake proceeds.
 */
export const secureJoin = method({
  name: "secure_join",
  scope: "send",
  summary: "Joins a peer through their invite link; returns the 1:1 chat id at once.",
  params: [
    ACCOUNT_PARAM,
    { name: "link", type: "string", description: "OPENPGP4FPR:… or https://i.delta.chat/#…" },
  ],
  result: { type: "u32", description: "The chat id." },
  handler: (s, [, link]) => s.core.secureJoin.join(link),
});

/** The SecureJoin methods, in documentation order. */
export const SECUREJOIN_METHODS: readonly MethodEntry[] = [getChatSecurejoinQrCode, secureJoin];
