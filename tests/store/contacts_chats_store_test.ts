/** Tests of ContactsStore and ChatsStore. */
import assert from "node:assert/strict";
import { withStore } from "./_store.ts";

const FPR = "ABCDEF0123456789ABCDEF0123456789ABCDEF01";

Deno.test("ContactsStore round-trips a key-contact and patches only named fields", () => {
  withStore((s) => {
    const key = new Uint8Array([1, 2, 3]);
    const id = s.contacts.insert({
      addr: "bob@x",
      authName: "Bob",
      fingerprint: FPR,
      publicKey: key,
    });
    const c = s.contacts.get(id)!;
    assert.deepEqual({ ...c, createdAt: 0 }, {
      id,
      addr: "bob@x",
      authName: "Bob",
      name: "",
      fingerprint: FPR,
      publicKey: key,
      verified: false,
      verifierId: 0,
      createdAt: 0,
      lastSeen: 0,
    });
    assert.equal(s.contacts.update(id, { addr: "bob@y" }), true);
    assert.equal(s.contacts.get(id)?.addr, "bob@y");
    assert.equal(s.contacts.get(id)?.authName, "Bob");
    s.contacts.touch(id, 50);
    s.contacts.touch(id, 40);
    assert.equal(s.contacts.get(id)?.lastSeen, 50, "last_seen never goes back");
    s.contacts.setVerified(id, 1);
    assert.equal(s.contacts.byFingerprint(FPR)?.verified, true);
    assert.equal(s.contacts.byFingerprint(""), undefined);
    assert.deepEqual(s.contacts.keyContactsByAddr("bob@y").map((r) => r.id), [id]);
  });
});

Deno.test("ContactsStore.list() separates key-contacts and address-only ones", () => {
  withStore((s) => {
    const a = s.contacts.insert({ addr: "a@x", fingerprint: FPR, lastSeen: 5 });
    const b = s.contacts.insert({ addr: "b@x", fingerprint: "1".repeat(40), lastSeen: 9 });
    const plain = s.contacts.insert({ addr: "c@x" });
    assert.deepEqual(s.contacts.list(true).map((c) => c.id), [b, a]);
    assert.deepEqual(s.contacts.list(false).map((c) => c.id), [plain]);
    assert.equal(s.contacts.addressContact("c@x")?.id, plain);
  });
});

Deno.test("ChatsStore keeps one 1:1 chat per contact, members and activity order", () => {
  withStore((s) => {
    const one = s.chats.insert({ type: 100, contactId: 20 });
    const two = s.chats.insert({ type: 100, contactId: 21 });
    const group = s.chats.insert({ type: 120, name: "Team", grpid: "grp-123456789" });
    assert.throws(() => s.chats.insert({ type: 100, contactId: 20 }), /UNIQUE/);
    s.chats.addMember(group, 1);
    s.chats.addMember(group, 21);
    s.chats.addMember(group, 21);
    assert.deepEqual(s.chats.memberIds(group), [1, 21]);
    assert.equal(s.chats.singleByContact(21)?.id, two);
    assert.equal(s.chats.byGrpid("grp-123456789")?.id, group);
    s.msgs.insert({ chatId: one, fromId: 20, state: 1, timestamp: 9_999_999_999 });
    s.msgs.insert({ chatId: two, fromId: 21, state: 1, timestamp: 9_999_999_999, hidden: true });
    const order = s.chats.listByActivity({ archived: false }).map((c) => c.id);
    assert.deepEqual(order, [one, group, two], "hidden messages are no activity");
    assert.deepEqual(s.chats.listByActivity({ archived: false, contactId: 21 }).map((c) => c.id), [
      group,
    ]);
    assert.equal(s.chats.freshCount(one), 1);
    assert.equal(s.chats.freshCount(two), 0);
    s.chats.setArchived(one, true);
    assert.deepEqual(s.chats.listByActivity({ archived: true }).map((c) => c.id), [one]);
    assert.equal(s.chats.countArchived(), 1);
    assert.equal(s.chats.archivedFreshCount(), 1);
  });
});
