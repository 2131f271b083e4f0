/** Tests of the contacts domain: peers by fingerprint, verification, Delta Chat list semantics. */
import assert from "node:assert/strict";
import { ContactListFlag, Contacts } from "../../../src/core/contacts/contacts.ts";
import { addPeer, bench, fpr } from "../_messaging.ts";

Deno.test("upsertPeerFromKey() creates a key-contact once and emits ContactsChanged", () => {
  const b = bench();
  const contacts = new Contacts(b.ctx);
  const key = new Uint8Array([1, 2]);
  const first = contacts.upsertPeerFromKey({
    addr: " Bob@Relay.TEST ",
    name: "Bob",
    fingerprint: "aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa",
    publicKey: key,
    seenAt: 100,
  });
  assert.deepEqual(first, { id: 10, created: true, changed: true });
  const c = contacts.get(10)!;
  assert.equal(c.addr, "bob@relay.test");
  assert.equal(c.fingerprint, fpr("A"));
  assert.equal(c.authName, "Bob");
  assert.equal(c.lastSeen, 100);
  assert.deepEqual(b.sink.take(), [{ kind: "ContactsChanged", contactId: 10 }]);
  const same = contacts.upsertPeerFromKey({
    addr: "bob@relay.test",
    fingerprint: fpr("A"),
    publicKey: key,
    seenAt: 200,
  });
  assert.deepEqual(same, { id: 10, created: false, changed: false });
  assert.equal(contacts.get(10)?.lastSeen, 200);
  assert.deepEqual(b.sink.take(), [], "lastSeen alone is no contact change");
  b.store.close();
});

Deno.test("upsertPeerFromKey() moves a known fingerprint to its new address", () => {
  const b = bench();
  const contacts = new Contacts(b.ctx);
  const id = addPeer(b, "bob@old.test", "b", "Bob");
  b.sink.take();
  const moved = contacts.upsertPeerFromKey({
    addr: "bob@new.test",
    fingerprint: fpr("b"),
    publicKey: new Uint8Array([7]),
  });
  assert.deepEqual(moved, { id, created: false, changed: true });
  assert.equal(contacts.get(id)?.addr, "bob@new.test");
  assert.equal(contacts.get(id)?.authName, "Bob", "an empty name keeps the known one");
  assert.deepEqual(contacts.get(id)?.publicKey, new Uint8Array([7]));
  assert.equal(contacts.lookupIdByAddr("bob@new.test"), id);
  assert.equal(contacts.lookupIdByAddr("bob@old.test"), undefined);
  assert.deepEqual(b.sink.take(), [{ kind: "ContactsChanged", contactId: id }]);
  b.store.close();
});

Deno.test("upsertPeerFromKey() answers self for our own fingerprint and rejects bad input", () => {
  const b = bench();
  const contacts = new Contacts(b.ctx);
  const own = { addr: "me@relay.test", fingerprint: fpr("f"), publicKey: new Uint8Array() };
  assert.deepEqual(contacts.upsertPeerFromKey(own), { id: 1, created: false, changed: false });
  assert.throws(
    () => contacts.upsertPeerFromKey({ ...own, fingerprint: "xyz" }),
    /"xyz" is not a key fingerprint/,
  );
  assert.throws(
    () => contacts.upsertPeerFromKey({ ...own, fingerprint: fpr("a"), addr: "nobody" }),
    /"nobody" is not an e-mail address/,
  );
  assert.equal(b.store.contacts.count(), 0);
  b.store.close();
});

Deno.test("markVerified() verifies key-contacts once and refuses address-only ones", () => {
  const b = bench();
  const contacts = new Contacts(b.ctx);
  const id = addPeer(b, "bob@relay.test", "b");
  const plain = contacts.upsertAddressContact("carol@relay.test", "Carol").id;
  b.sink.take();
  contacts.markVerified(id);
  contacts.markVerified(id);
  assert.equal(contacts.get(id)?.verified, true);
  assert.equal(contacts.get(id)?.verifierId, 1);
  assert.deepEqual(b.sink.take(), [{ kind: "ContactsChanged", contactId: id }]);
  assert.throws(() => contacts.markVerified(plain), /has no key, so it cannot be verified/);
  assert.throws(() => contacts.markVerified(99), /contact 99 not found/);
  b.store.close();
});

Deno.test("list() follows Delta Chat: key-contacts, 0x04 address-only, 0x02 adds self", () => {
  const b = bench();
  const contacts = new Contacts(b.ctx);
  const bob = addPeer(b, "bob@relay.test", "b", "Bob Builder");
  const alice = addPeer(b, "alice@relay.test", "a", "Alice");
  b.store.contacts.touch(alice, 500);
  const plain = contacts.upsertAddressContact("carol@relay.test").id;
  assert.deepEqual(contacts.list(0, null), [alice, bob], "most recently seen first");
  assert.deepEqual(contacts.list(ContactListFlag.ADDRESS, null), [plain]);
  assert.deepEqual(contacts.list(ContactListFlag.ADD_SELF, null), [alice, bob, 1]);
  assert.deepEqual(contacts.list(0, "BUILD"), [bob], "query matches names, any case");
  assert.deepEqual(contacts.list(0, "alice@"), [alice], "and addresses");
  assert.deepEqual(contacts.list(ContactListFlag.ADD_SELF, "me@relay"), [1]);
  assert.deepEqual(contacts.list(ContactListFlag.ADD_SELF, "bob"), [bob]);
  b.store.close();
});

Deno.test("lookupIdByAddr() finds self and key-contacts, not address-only contacts", () => {
  const b = bench();
  const contacts = new Contacts(b.ctx);
  const bob = addPeer(b, "bob@relay.test", "b");
  contacts.upsertAddressContact("carol@relay.test");
  assert.equal(contacts.lookupIdByAddr("ME@relay.test"), 1);
  assert.equal(contacts.lookupIdByAddr("Bob@Relay.Test"), bob);
  assert.equal(contacts.lookupIdByAddr("carol@relay.test"), undefined);
  assert.equal(contacts.details(1)?.displayName, "Me");
  assert.equal(contacts.details(1)?.authName, "Gateway");
  assert.equal(contacts.details(5), undefined, "other special ids are not contacts here");
  b.store.close();
});
