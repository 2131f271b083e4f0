/** Tests of the chats domain: get-or-create 1:1, chat list order and flags, members, summaries. */
import assert from "node:assert/strict";
import { ChatListFlag, Chats } from "../../../src/core/chats/chats.ts";
import { addPeer, bench } from "../_messaging.ts";

Deno.test("getOrCreate1to1() creates once, emits on creation only", () => {
  const b = bench();
  const chats = new Chats(b.ctx);
  const bob = addPeer(b, "bob@relay.test", "b", "Bob");
  b.sink.take();
  assert.deepEqual(chats.getOrCreate1to1(bob), { chatId: 10, created: true });
  assert.deepEqual(b.sink.take(), [
    { kind: "MsgsChanged", chatId: 0, msgId: 0 },
    { kind: "ChatModified", chatId: 10 },
  ]);
  assert.deepEqual(chats.getOrCreate1to1(bob), { chatId: 10, created: false });
  assert.deepEqual(b.sink.take(), []);
  assert.equal(chats.nameOf(chats.require(10)), "Bob", "1:1 chats are named after the peer");
  b.store.close();
});

Deno.test("getOrCreate1to1() refuses unknown contacts, special ids and self clearly", () => {
  const b = bench();
  const chats = new Chats(b.ctx);
  assert.throws(() => chats.getOrCreate1to1(42), { code: -1, message: "contact 42 not found" });
  assert.throws(() => chats.getOrCreate1to1(5), { code: -1, message: "contact 5 not found" });
  assert.throws(() => chats.getOrCreate1to1(1), /contact 1 \(self\)/);
  assert.throws(() => chats.require(99), { code: -1, message: "chat 99 not found" });
  b.store.close();
});

Deno.test("contactIds() gives [1, peer] for a 1:1 chat (the contract), memberIds() Delta Chat's [peer]", () => {
  const b = bench();
  const chats = new Chats(b.ctx);
  const bob = addPeer(b, "bob@relay.test", "b");
  const { chatId } = chats.getOrCreate1to1(bob);
  assert.deepEqual(chats.contactIds(chatId), [1, bob]);
  assert.deepEqual(chats.memberIds(chatId), [bob]);
  assert.deepEqual(chats.recipients(chats.require(chatId)).map((c) => c.id), [bob]);
  assert.equal(chats.selfInChat(chats.require(chatId)), true);
  b.store.close();
});

Deno.test("listEntries() orders by newest activity and filters by name, contact and archive", () => {
  const b = bench();
  const chats = new Chats(b.ctx);
  const bob = addPeer(b, "bob@relay.test", "b", "Bob");
  const alice = addPeer(b, "alice@relay.test", "a", "Alice");
  const withBob = chats.getOrCreate1to1(bob).chatId;
  const withAlice = chats.getOrCreate1to1(alice).chatId;
  assert.deepEqual(chats.listEntries(), [withAlice, withBob], "newer chat first");
  const later = b.store.chats.get(withAlice)!.createdAt + 10;
  b.store.msgs.insert({ chatId: withBob, fromId: bob, state: 1, timestamp: later });
  assert.deepEqual(chats.listEntries({}), [withBob, withAlice], "a message is newer activity");
  assert.deepEqual(chats.listEntries({ query: "ALI" }), [withAlice]);
  assert.deepEqual(chats.listEntries({ contactId: bob }), [withBob]);
  b.store.chats.setArchived(withAlice, true);
  assert.deepEqual(chats.listEntries(), [withBob, 6], "archive link at the end");
  assert.deepEqual(chats.listEntries({ flags: ChatListFlag.NO_SPECIALS }), [withBob]);
  assert.deepEqual(chats.listEntries({ flags: ChatListFlag.ARCHIVED_ONLY }), [withAlice]);
  b.store.close();
});

Deno.test("summary() counts fresh visible messages and reports the newest one", () => {
  const b = bench();
  const chats = new Chats(b.ctx);
  const bob = addPeer(b, "bob@relay.test", "b", "Bob");
  const chatId = chats.getOrCreate1to1(bob).chatId;
  const empty = chats.summary(chatId)!;
  assert.equal(empty.freshCount, 0);
  assert.equal(empty.lastMessage, undefined);
  assert.equal(empty.lastUpdated, b.store.chats.get(chatId)!.createdAt * 1000);
  const at = (state: number, timestamp: number, hidden = false) =>
    b.store.msgs.insert({ chatId, fromId: bob, state, timestamp, text: `t${timestamp}`, hidden });
  at(1, 100);
  const newest = at(16, 200);
  at(1, 300, true);
  const s = chats.summary(chatId)!;
  assert.equal(s.freshCount, 1);
  assert.equal(s.lastMessage?.id, newest);
  assert.equal(s.lastSender?.displayName, "Bob");
  assert.equal(s.lastUpdated, 200_000);
  assert.equal(s.dmContactId, bob);
  assert.equal(chats.summary(99), undefined);
  b.store.close();
});
