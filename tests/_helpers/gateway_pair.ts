/**
 * Helpers for tests with two gateways: join them by SecureJoin (inviter's link, joiner's
 * `secure_join`, both sides at progress 1000 and verified) and read a chat's messages.
 */
import assert from "node:assert/strict";
import type { GatewayPeer } from "./gateway_peer.ts";

/** A message as `get_messages` answers it (the fields these tests use). */
export interface ChatMsg {
  id: number;
  chatId: number;
  text: string;
  state: number;
  fromId: number;
}

/** The ids both sides got from a finished SecureJoin. */
export interface JoinedPair {
  /** The 1:1 chat on the inviter. */
  readonly inviterChat: number;
  /** The 1:1 chat on the joiner. */
  readonly joinerChat: number;
  /** The joiner as a contact of the inviter. */
  readonly joinerOnInviter: number;
  /** The inviter as a contact of the joiner. */
  readonly inviterOnJoiner: number;
}

/** `joiner` joins `inviter`'s invite link; resolves when both sides are verified. */
export async function joinBySecureJoin(
  inviter: GatewayPeer,
  joiner: GatewayPeer,
  timeoutMs = 30_000,
): Promise<JoinedPair> {
  const fromI = inviter.events.length;
  const fromJ = joiner.events.length;
  const link = await inviter.call<string>("get_chat_securejoin_qr_code", 1, null);
  const joinerChat = await joiner.call<number>("secure_join", 1, link);
  const done = await inviter.waitForEvent(
    (e) => e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000,
    timeoutMs,
    fromI,
  );
  const joined = await joiner.waitForEvent(
    (e) => e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000,
    timeoutMs,
    fromJ,
  );
  const pair: JoinedPair = {
    inviterChat: done.event.chat_id as number,
    joinerChat,
    joinerOnInviter: done.event.contact_id as number,
    inviterOnJoiner: joined.event.contact_id as number,
  };
  const c = await joiner.call<{ isVerified: boolean }>("get_contact", 1, pair.inviterOnJoiner);
  assert.equal(c.isVerified, true, "the inviter is verified on the joiner");
  return pair;
}

/** Every message of `chatId` on `peer`, in the chat's order (day markers left out). */
export async function chatMessages(peer: GatewayPeer, chatId: number): Promise<ChatMsg[]> {
  const ids = (await peer.call<number[]>("get_message_ids", 1, chatId, false, false))
    .filter((id) => id > 9);
  if (ids.length === 0) return [];
  const byId = await peer.call<Record<string, ChatMsg>>("get_messages", 1, ids);
  return ids.map((id) => byId[String(id)]);
}

/** Messages of `ids` on `peer`, in the order given. */
export async function messagesById(peer: GatewayPeer, ids: readonly number[]): Promise<ChatMsg[]> {
  if (ids.length === 0) return [];
  const byId = await peer.call<Record<string, ChatMsg>>("get_messages", 1, ids);
  return ids.map((id) => byId[String(id)]);
}

/** Runs `fn` over `items` with at most `width` calls at once; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}
