/**
 * `lookupIdByAddr` against impostors, through the reception pipeline with real keys: a mail
 * From a verified contact's address, signed by another key and dated a year ahead, creates an
 * unverified contact that never wins the lookup; header dates are clamped to the receipt clock,
 * so between unverified keys the one that really wrote last wins.
 */
import assert from "node:assert/strict";
import { Chats } from "../../src/core/chats/chats.ts";
import { Contacts } from "../../src/core/contacts/contacts.ts";
import { MessageStates } from "../../src/core/chats/message_states.ts";
import { Messages } from "../../src/core/chats/messages.ts";
import { introduce, type TestAccount, testAccount } from "./_accounts.ts";
import { signedChatMail } from "../_helpers/signed_mail.ts";

const YEAR_MS = 365 * 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/** A mail From `from` to `to`, signed by a fresh key (its Autocrypt key), dated `date`. */
function impostorMail(from: string, to: TestAccount, date: Date): Promise<Uint8Array> {
  return signedChatMail({
    from,
    fromName: "Alice",
    to: { addr: to.addr, publicKey: to.self.publicKey },
    messageId: `<impostor-${crypto.randomUUID()}@evil.test>`,
    date,
    subject: "hi",
    text: "reply to me, not to the old key",
  });
}

/** A real chat message from `a` to `b` (through send_msg's path), as raw bytes. */
async function realMail(a: TestAccount, chatId: number, text: string): Promise<Uint8Array> {
  const msgId = await new Messages(a.ctx).createOutgoing(
    { chatId, text },
    a.send,
  );
  const row = a.store.outbox.due(Number.MAX_SAFE_INTEGER).find((r) => r.msgId === msgId)!;
  new MessageStates(a.ctx).outboxSent(row.id);
  return row.raw;
}

async function setup() {
  let now = T0;
  const clock = () => now;
  const a = await testAccount("alice@relay.test", "Alice", undefined, 0, clock);
  const b = await testAccount("bob@relay.test", "Bob", undefined, 0, clock);
  const { aOnB, bOnA } = introduce(a, b);
  const aChat = new Chats(a.ctx).getOrCreate1to1(bOnA).chatId;
  return { a, b, aOnB, aChat, advance: (ms: number) => now += ms, clock };
}

Deno.test("an impostor dated a year ahead never wins lookupIdByAddr over the verified contact", async () => {
  const { a, b, aOnB, aChat, advance } = await setup();
  const contacts = new Contacts(b.ctx);
  contacts.markVerified(aOnB);
  assert.equal((await b.receiver.receive(await realMail(a, aChat, "hello"))).kind, "message");
  advance(60_000);

  const forged = await b.receiver.receive(
    await impostorMail(a.addr, b, new Date(T0 + YEAR_MS)),
  );
  assert.equal(forged.kind, "message", "stored as mail from a new, unverified key");
  const ids = b.store.contacts.keyContactsByAddr(a.addr).map((c) => c.id);
  assert.equal(ids.length, 2, "two keys claim the address");
  const impostor = ids.find((id) => id !== aOnB)!;
  assert.equal(contacts.lookupIdByAddr(a.addr), aOnB);
  assert.ok(
    contacts.details(impostor)!.lastSeen <= Math.floor((T0 + 60_000) / 1000),
    "the forged Date is clamped to the receipt clock",
  );

  // More forged mail, later: the verified contact keeps winning.
  for (let i = 0; i < 3; i++) {
    advance(3600_000);
    await b.receiver.receive(await impostorMail(a.addr, b, new Date(T0 + 2 * YEAR_MS)));
    assert.equal(contacts.lookupIdByAddr(a.addr), aOnB);
  }
});

Deno.test("between unverified keys, a future Date does not pin the impostor first for good", async () => {
  const { a, b, aOnB, aChat, advance } = await setup();
  const contacts = new Contacts(b.ctx);
  await b.receiver.receive(await realMail(a, aChat, "hello"));
  advance(60_000);
  await b.receiver.receive(await impostorMail(a.addr, b, new Date(T0 + YEAR_MS)));
  const impostor = b.store.contacts.keyContactsByAddr(a.addr).find((c) => c.id !== aOnB)!.id;
  assert.equal(contacts.lookupIdByAddr(a.addr), impostor, "the newest writer, for now");
  advance(60_000);
  await b.receiver.receive(await realMail(a, aChat, "it's me again"));
  assert.equal(contacts.lookupIdByAddr(a.addr), aOnB, "the real contact wrote last");
});
