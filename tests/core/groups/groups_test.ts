/** Tests of groups between in-memory accounts with real keys: create, send, change, receive. */
import assert from "node:assert/strict";
import { ChatType, ContactId } from "../../../src/constants.ts";
import { Chats } from "../../../src/core/chats/chats.ts";
import { GroupMembers } from "../../../src/core/groups/members.ts";
import { Groups } from "../../../src/core/groups/groups.ts";
import { Messages } from "../../../src/core/chats/messages.ts";
import { parseMime } from "../../../src/mime/parser.ts";
import { decryptMessage } from "../../../src/crypto/pgp.ts";
import { dearmor } from "../../../src/crypto/armor.ts";
import { deliver, introduce, type TestAccount, testAccount } from "../_accounts.ts";

function groups(acc: TestAccount) {
  return new Groups(acc.ctx, acc.send);
}

async function send(acc: TestAccount, chatId: number, text: string) {
  return await new Messages(acc.ctx).createOutgoing(
    { chatId, text },
    acc.send,
  );
}

async function inner(acc: TestAccount, raw: Uint8Array) {
  const outer = parseMime(raw);
  const armored = new TextDecoder().decode(outer.parts[1].body);
  const d = await decryptMessage(dearmor(armored), acc.self.privateKey);
  return parseMime(d.plaintext);
}

async function trio() {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const c = await testAccount("carol@relay.test", "Carol");
  const ab = introduce(a, b), ac = introduce(a, c);
  return { a, b, c, bOnA: ab.bOnA, cOnA: ac.bOnA };
}

/** Alice's group "Team" with Bob and Carol added (not announced yet: nothing sent). */
async function team() {
  const t = await trio();
  const g = groups(t.a);
  const chatId = g.create("Team");
  await g.addMember(chatId, t.bOnA);
  await g.addMember(chatId, t.cOnA);
  return { ...t, g, chatId };
}

Deno.test("a created group gets its members and sends one mail every member reads, in the group", async () => {
  const { a, b, c, chatId } = await team();
  assert.equal(a.store.outbox.count(), 0, "an unannounced group sends nothing yet");
  await send(a, chatId, "hello team");
  const rows = a.store.outbox.due(Date.now() + 10_000);
  assert.equal(rows.length, 1, "one mail for the whole group");
  assert.deepEqual([...rows[0].recipients].sort(), ["bob@relay.test", "carol@relay.test"]);
  const h = (await inner(b, rows[0].raw)).headers;
  assert.equal(h.get("chat-group-name"), "Team");
  assert.equal(h.get("chat-group-member-timestamps")!.split(" ").length, 2);
  assert.equal(h.get("chat-group-member-fpr")!.split(" ").length, 2);
  assert.equal(h.getAll("autocrypt-gossip").length, 2, "first message gossips every member");
  await deliver(a, b, c);
  for (const acc of [b, c]) {
    const chat = acc.store.chats.byGrpid(a.store.chats.get(chatId)!.grpid)!;
    assert.equal(chat.type, ChatType.GROUP);
    assert.equal(chat.name, "Team");
    const members = acc.store.chats.memberIds(chat.id);
    assert.equal(members.length, 3, `${acc.addr} sees 3 members`);
    assert.ok(members.includes(ContactId.SELF));
    const msgs = new Messages(acc.ctx).idsOfChat(chat.id).map((id) => acc.store.msgs.get(id)!);
    assert.deepEqual(msgs.map((m) => m.text), ["hello team"]);
  }
  // Bob learned Carol from gossip and can write to the group.
  const bChat = b.store.chats.byGrpid(a.store.chats.get(chatId)!.grpid)!;
  const carolOnB = b.store.contacts.byFingerprint(c.self.fingerprint)!;
  assert.ok(carolOnB.publicKey.length > 0, "gossip gave Bob Carol's key");
  await send(b, bChat.id, "hi from bob");
  await deliver(b, a, c);
  const cChat = c.store.chats.byGrpid(bChat.grpid)!;
  assert.deepEqual(
    new Messages(c.ctx).idsOfChat(cChat.id).map((id) => c.store.msgs.get(id)!.text),
    ["hello team", "hi from bob"],
  );
  assert.equal(
    new Messages(a.ctx).idsOfChat(chatId).map((id) => a.store.msgs.get(id)!.text).at(-1),
    "hi from bob",
  );
});

Deno.test("removal, rename and leave reach every member; a removed member cannot change the group", async () => {
  const { a, b, c, cOnA, g, chatId } = await team();
  await send(a, chatId, "hello");
  await deliver(a, b, c);
  const grpid = a.store.chats.get(chatId)!.grpid;
  await g.rename(chatId, "New Team");
  await deliver(a, b, c);
  assert.equal(b.store.chats.byGrpid(grpid)!.name, "New Team");
  await g.removeMember(chatId, cOnA);
  const removal = a.store.outbox.due(Date.now() + 10_000)[0];
  assert.ok(removal.recipients.includes("carol@relay.test"), "the removed member gets the removal");
  const rh = (await inner(b, removal.raw)).headers;
  assert.equal(rh.get("to"), '"Bob" <bob@relay.test>', "the removed member is not in To");
  assert.equal(rh.get("chat-group-past-members"), '"Carol" <carol@relay.test>');
  assert.equal(rh.get("chat-group-member-timestamps")!.split(" ").length, 2, "To + past");
  assert.deepEqual(rh.get("chat-group-member-fpr")!.split(" "), [
    b.self.fingerprint,
    c.self.fingerprint,
  ]);
  assert.equal(rh.get("chat-group-member-removed"), "carol@relay.test");
  assert.equal(rh.get("chat-group-member-removed-fpr"), c.self.fingerprint);
  await deliver(a, b, c);
  const bChat = b.store.chats.byGrpid(grpid)!;
  const cChat = c.store.chats.byGrpid(grpid)!;
  const carolOnB = b.store.contacts.byFingerprint(c.self.fingerprint)!.id;
  assert.equal(b.store.chats.memberIds(bChat.id).includes(carolOnB), false);
  assert.equal(new GroupMembers(c.ctx).isMember(cChat.id, ContactId.SELF), false, "Carol is out");
  await assert.rejects(() => send(c, cChat.id, "still here?"), /not a member/);
  // Carol (removed) renames: members ignore it.
  c.store.chats.setMembership(cChat.id, {
    contactId: ContactId.SELF,
    addTimestamp: 9e9,
    removeTimestamp: 0,
  });
  await groups(c).rename(cChat.id, "Hijacked");
  await deliver(c, a, b);
  assert.equal(a.store.chats.get(chatId)!.name, "New Team");
  assert.equal(b.store.chats.byGrpid(grpid)!.name, "New Team");
  assert.equal(a.store.chats.memberIds(chatId).includes(cOnA), false, "no re-add");
  // Bob leaves.
  await groups(b).leave(bChat.id);
  await deliver(b, a);
  assert.deepEqual(a.store.chats.memberIds(chatId), [ContactId.SELF]);
  const info = new Messages(a.ctx).idsOfChat(chatId).map((id) => a.store.msgs.get(id)!)
    .filter((m) => m.isInfo).map((m) => m.text);
  assert.ok(info.includes("Group left by Bob."), JSON.stringify(info));
  assert.equal(new Chats(a.ctx).get(chatId)!.type, ChatType.GROUP);
});

Deno.test("group join by invite: the joiner gets the group id at once, then membership; a member sees the new one", async () => {
  const { a, c, cOnA } = await trio();
  const b = await testAccount("dave@relay.test", "Dave"); // knows nobody yet
  const g = groups(a);
  const chatId = g.create("Club");
  await g.addMember(chatId, cOnA);
  await send(a, chatId, "welcome");
  await deliver(a, c);
  const link = a.secureJoin.createInvite(chatId);
  assert.match(link, /&g=Club&x=[\w-]{24}&i=/);
  const bChat = await b.secureJoin.join(link);
  assert.equal(b.store.chats.get(bChat)!.type, ChatType.GROUP);
  assert.equal(new GroupMembers(b.ctx).isMember(bChat, ContactId.SELF), false);
  for (let i = 0; i < 3; i++) {
    await deliver(b, a);
    await deliver(a, b, c);
  }
  assert.equal(new GroupMembers(b.ctx).isMember(bChat, ContactId.SELF), true, "b is a member");
  assert.equal(b.store.chats.memberIds(bChat).length, 3);
  const progress = b.sink.events.filter((e) => e.kind === "SecurejoinJoinerProgress");
  assert.deepEqual(
    progress.map((e) => [e.chatId, e.chatType, e.progress]),
    [[bChat, 120, 400], [bChat, 120, 1000]],
  );
  const inviter = a.sink.events.find((e) => e.kind === "SecurejoinInviterProgress");
  assert.deepEqual(inviter && [inviter.chatId, inviter.chatType, inviter.progress], [
    chatId,
    120,
    1000,
  ]);
  const cChat = c.store.chats.byGrpid(a.store.chats.get(chatId)!.grpid)!;
  assert.equal(c.store.chats.memberIds(cChat.id).length, 3, "Carol sees Dave joined");
  await send(b, bChat, "hi all");
  await deliver(b, a, c);
  assert.equal(
    new Messages(c.ctx).idsOfChat(cChat.id).map((id) => c.store.msgs.get(id)!.text).at(-1),
    "hi all",
  );
});

Deno.test("gossip makes contacts (ContactsChanged); a removed member's later mail re-adds nobody", async () => {
  const { a, b, c, cOnA, g, chatId } = await team();
  await send(a, chatId, "hello");
  b.sink.take();
  await deliver(a, b, c);
  const carolOnB = b.store.contacts.byFingerprint(c.self.fingerprint)!.id;
  assert.ok(
    b.sink.events.some((e) => e.kind === "ContactsChanged" && e.contactId === carolOnB),
    "ContactsChanged for the contact learned from gossip",
  );
  const grpid = a.store.chats.get(chatId)!.grpid;
  const bChat = b.store.chats.byGrpid(grpid)!.id;
  const incoming = b.sink.events.find((e) => e.kind === "IncomingMsg");
  assert.equal(
    incoming && "chatId" in incoming && incoming.chatId,
    bChat,
    "IncomingMsg names the group",
  );
  await g.removeMember(chatId, cOnA);
  await deliver(a, b, c);
  const cChat = c.store.chats.byGrpid(grpid)!.id;
  // Carol, removed, still writes (her copy is forced to think she is a member): shown, but
  // nobody re-adds her, and her member list changes nothing.
  c.store.chats.setMembership(cChat, {
    contactId: ContactId.SELF,
    addTimestamp: 4_000_000_000,
    removeTimestamp: 0,
  });
  await send(c, cChat, "am I still in?");
  await deliver(c, a, b);
  assert.equal(a.store.chats.memberIds(chatId).includes(cOnA), false);
  assert.equal(b.store.chats.memberIds(bChat).includes(carolOnB), false);
  assert.equal(
    new Messages(a.ctx).idsOfChat(chatId).map((id) => a.store.msgs.get(id)!.text).at(-1),
    "am I still in?",
    "a non-member's ordinary message is still shown in the group",
  );
});

Deno.test("a non-member's member-added is ignored; members without a key are skipped, not refused", async () => {
  const { a, b, c, bOnA } = await trio();
  const g = groups(a);
  const chatId = g.create("Team");
  await g.addMember(chatId, bOnA);
  await send(a, chatId, "hello");
  await deliver(a, b);
  const grpid = a.store.chats.get(chatId)!.grpid;
  // Carol was never a member; she forges a group mail adding herself.
  const aOnC = c.store.contacts.byFingerprint(a.self.fingerprint)!.id;
  const forged = c.store.chats.insert({
    type: ChatType.GROUP,
    name: "Team",
    grpid,
    nameTimestamp: 1,
  });
  c.store.chats.setMembership(forged, {
    contactId: ContactId.SELF,
    addTimestamp: 1,
    removeTimestamp: 0,
  });
  c.store.chats.setMembership(forged, { contactId: aOnC, addTimestamp: 1, removeTimestamp: 0 });
  await groups(c).rename(forged, "Taken over");
  await deliver(c, a);
  assert.equal(a.store.chats.get(chatId)!.name, "Team");
  assert.deepEqual(a.store.chats.memberIds(chatId).length, 2);
  // A member known only by fingerprint (no key yet) stays in To but is not encrypted to.
  const keyless = a.store.contacts.insert({
    addr: "nokey@relay.test",
    fingerprint: "D".repeat(40),
  });
  a.store.chats.setMembership(chatId, { contactId: keyless, addTimestamp: 5, removeTimestamp: 0 });
  await send(a, chatId, "still works");
  const row = a.store.outbox.due(Date.now() + 10_000).at(-1)!;
  assert.deepEqual(row.recipients, ["bob@relay.test"]);
});

Deno.test("every member's key is gossiped on the first message, then again only after 2 days", async () => {
  const { a, b, chatId } = await team();
  const gossipOf = async () => {
    const row = a.store.outbox.due(Date.now() + 10_000).at(-1)!;
    a.store.outbox.remove(row.id);
    return (await inner(b, row.raw)).headers.getAll("autocrypt-gossip").length;
  };
  await send(a, chatId, "one");
  assert.equal(await gossipOf(), 2);
  await send(a, chatId, "two");
  assert.equal(await gossipOf(), 0, "gossiped moments ago");
  a.store.chats.setGossipedAt(chatId, Math.floor(Date.now() / 1000) - 2 * 86_400 - 1);
  await send(a, chatId, "three");
  assert.equal(await gossipOf(), 2, "over 2 days: gossiped again");
});
