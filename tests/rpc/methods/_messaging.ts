/**
 * Helpers for the messaging method tests: a method table of the contact, chat, message and
 * reaction methods, a call helper through dispatch, and a seeded account (peer Bob, a 1:1 chat).
 */
import type { OutgoingRenderer } from "../../../src/core/send/outgoing.ts";
import { dispatch, type RpcReply } from "../../../src/rpc/dispatch.ts";
import { createMethodTable } from "../../../src/rpc/method.ts";
import { CHAT_METHODS } from "../../../src/rpc/methods/chats.ts";
import { CONTACT_METHODS } from "../../../src/rpc/methods/contacts.ts";
import { MESSAGE_METHODS } from "../../../src/rpc/methods/messages.ts";
import { MESSAGE_EDIT_METHODS } from "../../../src/rpc/methods/message_edits.ts";
import { REACTION_METHODS } from "../../../src/rpc/methods/reactions.ts";
import type { Services } from "../../../src/services.ts";
import { ConfigKey } from "../../../src/store/mod.ts";
import { FAKE_KEY, type FakeServices, fakeServices } from "../_fake_services.ts";

/** The messaging methods alone. */
export const TABLE = createMethodTable([
  ...CONTACT_METHODS,
  ...CHAT_METHODS,
  ...MESSAGE_METHODS,
  ...MESSAGE_EDIT_METHODS,
  ...REACTION_METHODS,
]);

/** Calls `method` through dispatch and returns the HTTP-level reply. */
export async function call(s: Services, method: string, params: unknown[]): Promise<RpcReply> {
  return await dispatch(JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }), s, TABLE);
}

/** Calls `method` and returns its `result`; throws when the reply is not a result. */
export async function result(s: Services, method: string, params: unknown[]): Promise<unknown> {
  const reply = await call(s, method, params);
  if (reply.status !== 200 || Array.isArray(reply.body) || !("result" in reply.body)) {
    throw new Error(`${method} did not return a result: ${JSON.stringify(reply)}`);
  }
  return reply.body.result;
}

/** Calls `method` and returns its JSON-RPC error object; throws when it succeeded. */
export async function rpcError(
  s: Services,
  method: string,
  params: unknown[],
): Promise<{ code: number; message: string }> {
  const reply = await call(s, method, params);
  if (reply.status !== 200 || Array.isArray(reply.body) || !("error" in reply.body)) {
    throw new Error(`${method} did not fail: ${JSON.stringify(reply)}`);
  }
  return reply.body.error;
}

/** Bob's fingerprint in the seeded account. */
export const BOB_FPR = "B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0";

/**
 * Services with me@relay.test, key-contact Bob (id 10, a fake key: pass a fake `renderer` to
 * send to him) and the 1:1 chat with him (10).
 */
export function seeded(
  dataDir?: string,
  renderer?: OutgoingRenderer,
): FakeServices & { bob: number; chatId: number } {
  const s = fakeServices({ dataDir, profile: "Edge One", renderer });
  s.store.config.set(ConfigKey.ADDR, "me@relay.test");
  s.store.config.set(ConfigKey.DISPLAY_NAME, "Edge One");
  s.store.keys.add(FAKE_KEY);
  const bob = s.core.contacts.upsertPeerFromKey({
    addr: "bob@relay.test",
    name: "Bob",
    fingerprint: BOB_FPR,
    publicKey: new Uint8Array([2]),
    seenAt: 1_700_000_000,
  }).id;
  const chatId = s.core.chats.getOrCreate1to1(bob).chatId;
  return { ...s, bob, chatId };
}
