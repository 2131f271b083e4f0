/**
 * Reaction RPC methods (Delta Chat's): `send_reaction` sets and sends our reaction to a message,
 * `get_message_reactions` reads everyone's. Reactions peers send arrive by mail (core/receive/controls.ts).
 */
import { NotFoundError } from "../../errors.ts";
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";
import { toReactionsObject } from "../types.ts";

/**
 * `get_message_reactions [account_id, message_id]` → `{reactionsByContact, reactions}` or null
 * when nobody reacted (Delta Chat's shape). Unknown id → -1.
 */
export const getMessageReactions = method({
  name: "get_message_reactions",
  scope: "read",
  summary: "The reactions on a message, by contact and by emoji; null without any.",
  params: [ACCOUNT_PARAM, { name: "message_id", type: "u32", description: "Message id." }],
  result: { type: "object", description: "{reactionsByContact, reactions} or null" },
  handler(s, [, id]) {
    const d = s.core.messages.details(id);
    if (d === undefined) throw new NotFoundError(`message ${id} not found`);
    return toReactionsObject(d.reactions);
  },
});

/**
 * `send_reaction [account_id, message_id, reactions]` → nothing (HTTP 204). Our reaction becomes
 * the first emoji of `reactions` (an empty array or `[""]` removes it; Delta Chat sends one per
 * message), stored at once (`ReactionsChanged`) and mailed to the chat's members.
 */
export const sendReaction = method({
  name: "send_reaction",
  scope: "send",
  summary: "Sets our reaction to a message (first emoji; empty removes it) and sends it.",
  params: [
    ACCOUNT_PARAM,
    { name: "message_id", type: "u32", description: "Message to react to." },
    { name: "reaction", type: "array<string>", description: 'E.g. ["👍"]; [] removes ours.' },
  ],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: (s, [, id, reaction]) => s.core.controls.react(id, reaction.join(" ")),
});

/** The reaction methods. */
export const REACTION_METHODS: readonly MethodEntry[] = [sendReaction, getMessageReactions];
