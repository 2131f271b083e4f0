/**
 * Helpers for the messaging method tests: a method table of the contact, chat, message and
 * reaction methods, a call helper through dispatch, and a seeded account (peer Bob, a 1:1 chat).
 */
import { Chats } from "../../../src/core/chats.ts";
import { contextOf } from "../../../src/core/context.ts";
import { Contacts } from "../../../src/core/contacts.ts";
import { dispatch, type RpcReply } from "../../../src/rpc/dispatch.ts";
import { createMethodTable } from "../../../src/rpc/method.ts";
import { CHAT_METHODS } from "../../../src/rpc/methods/chats.ts";
import { CONTACT_METHODS } from "../../../src/rpc/methods/contacts.ts";
import { MESSAGE_METHODS } from "../../../src/rpc/methods/messages.ts";
import { MESSAGE_EDIT_METHODS } from "../../../src/rpc/methods/message_edits.ts";
import { REACTION_METHODS } from "../../../src/rpc/methods/reactions.ts";
import type { Services } from "../../../src/services.ts";
import { ConfigKey } from "../../../src/store/mod.ts";
import { type FakeServices, fakeServices } from "../_fake_services.ts";

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

/** Fake services with me@relay.test, key-contact Bob (id 10) and the 1:1 chat with him (10). */
export function seeded(dataDir?: string): FakeServices & { bob: number; chatId: number } {
  const s = fakeServices({ dataDir });
  s.store.config.set(ConfigKey.ADDR, "me@relay.test");
  s.store.config.set(ConfigKey.DISPLAY_NAME, "Edge One");
  s.store.keys.add({
    fingerprint: "E".repeat(40),
    privateKey: "(test)",
    publicKey: new Uint8Array([1]),
  });
  const ctx = contextOf(s);
  const bob = new Contacts(ctx).upsertPeerFromKey({
    addr: "bob@relay.test",
    name: "Bob",
    fingerprint: BOB_FPR,
    publicKey: new Uint8Array([2]),
    seenAt: 1_700_000_000,
  }).id;
  const chatId = new Chats(ctx).getOrCreate1to1(bob).chatId;
  return { ...s, bob, chatId };
}
