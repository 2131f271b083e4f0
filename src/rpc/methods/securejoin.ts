/**
 * SecureJoin RPC methods (SPEC §4): `get_chat_securejoin_qr_code` makes a 1:1 invite link,
 * `secure_join` starts joining a peer's link and returns the chat id at once; the handshake runs
 * in the background and reports `SecurejoinInviterProgress` / `SecurejoinJoinerProgress` events.
 */
import { GatewayError } from "../../errors.ts";
import { ACCOUNT_PARAM, type MethodEntry } from "../method.ts";

/**
 * `get_chat_securejoin_qr_code [account_id, chat_id|null]` → invite link
 * `OPENPGP4FPR:<FPR>#a=<addr>&n=<name>&i=<invite>&s=<auth>` (a new auth token per call, no `v=3`).
 * Only 1:1 invites (`null`); a chat id → -1 (group invites are not supported).
 */
export const getChatSecurejoinQrCode: MethodEntry = {
  name: "get_chat_securejoin_qr_code",
  summary: "Creates a 1:1 invite link (OPENPGP4FPR:…) for a peer to join with secure_join.",
  params: [
    ACCOUNT_PARAM,
    { name: "chat_id", type: "u32?", description: "null for a 1:1 invite." },
  ],
  result: { type: "string", description: "The invite link." },
  handler(s, [, chatId]) {
    if (chatId !== null) {
      throw new GatewayError(
        `group invites are not supported (chat ${chatId}): pass null for a 1:1 invite`,
      );
    }
    return s.secureJoin.createInvite();
  },
};

/**
 * `secure_join [account_id, link]` → chat id of the 1:1 chat with the inviter (at once).
 * Accepts `OPENPGP4FPR:…` and `https://i.delta.chat/#…`. Malformed link → -32602 saying what is
 * wrong; own link → -1. Events: `ContactsChanged`, `ChatModified`, then
 * `SecurejoinJoinerProgress` 400 and 1000 as the handshake proceeds.
 */
export const secureJoin: MethodEntry = {
  name: "secure_join",
  summary: "Joins a peer through their invite link; returns the 1:1 chat id at once.",
  params: [
    ACCOUNT_PARAM,
    { name: "link", type: "string", description: "OPENPGP4FPR:… or https://i.delta.chat/#…" },
  ],
  result: { type: "u32", description: "The chat id." },
  handler: (s, [, link]) => s.secureJoin.join(link as string),
};

/** The SecureJoin methods, in documentation order. */
export const SECUREJOIN_METHODS: readonly MethodEntry[] = [getChatSecurejoinQrCode, secureJoin];
