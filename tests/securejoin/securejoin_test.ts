/**
 * SecureJoin inviter and joiner with real keys, mails handed between two in-memory accounts:
 * the legacy four steps, the shortcut (1:1 and group), and every refusal (unknown invite number,
 * wrong or replayed auth, forged steps, own and malformed links).
 */
import assert from "node:assert/strict";
import type { GatewayEvent } from "../../src/events/types.ts";
import { GatewayError, InvalidParamsError } from "../../src/errors.ts";
import { GroupMembers } from "../../src/core/groups/members.ts";
import { Groups } from "../../src/core/groups/groups.ts";
import { parseInvite } from "../../src/securejoin/invite.ts";
import { deliverAll, introduce, type TestAccount, testAccount } from "../core/_accounts.ts";

const ALICE = "alice@relay.test";
const BOB = "bob@relay.test";

function progress(a: TestAccount, kind: GatewayEvent["kind"]): number[] {
  return a.sink.events.filter((e) => e.kind === kind).map((e) =>
    (e as { progress: number }).progress
  );
}

function verifiedContacts(a: TestAccount): string[] {
  return a.store.contacts.list(true).filter((c) => c.verified).map((c) => c.addr);
}

Deno.test("the legacy handshake verifies both sides and creates the 1:1 chat on both", async () => {
  const alice = await testAccount(ALICE, "Alice");
  const bob = await testAccount(BOB, "Bob");
  const link = alice.secureJoin.createInvite();
  const invite = parseInvite(link);
  assert.deepEqual([invite.fingerprint, invite.addr, invite.name], [
    alice.self.fingerprint,
    ALICE,
    "Alice",
  ]);
  assert.equal(invite.version, undefined, "no v=3");

  const bobChat = await bob.secureJoin.join(link);
  assert.ok(bobChat >= 10, "the chat id comes back at once");
  assert.equal(bob.outbox.length, 1);
  assert.equal(bob.outbox[0].recipients[0], ALICE);
  assert.match(new TextDecoder().decode(bob.outbox[0].raw), /Secure-Join: vc-request\r\n/);

  assert.deepEqual((await deliverAll(bob, alice)).map((o) => o.kind), ["securejoin"]);
  assert.deepEqual((await deliverAll(alice, bob)).map((o) => o.kind), ["securejoin"]);
  assert.deepEqual(progress(bob, "SecurejoinJoinerProgress"), [400]);
  await deliverAll(bob, alice); // vc-request-with-auth
  const done = alice.sink.events.find((e) => e.kind === "SecurejoinInviterProgress") as
    | { contactId: number; chatId: number; chatType: number; progress: number }
    | undefined;
  assert.ok(done);
  assert.deepEqual([done.progress, done.chatType], [1000, 100]);
  assert.equal(alice.store.chats.singleByContact(done.contactId)?.id, done.chatId);
  assert.deepEqual(verifiedContacts(alice), [BOB]);
  await deliverAll(alice, bob); // vc-contact-confirm
  assert.deepEqual(progress(bob, "SecurejoinJoinerProgress"), [400, 1000]);
  assert.deepEqual(verifiedContacts(bob), [ALICE]);
  assert.deepEqual(bob.store.securejoin.joiners(), [], "the handshake is finished");
  const aliceOnBob = bob.store.contacts.byFingerprint(alice.self.fingerprint)!;
  assert.deepEqual(aliceOnBob.publicKey, alice.self.publicKey);
  assert.equal(bob.store.chats.singleByContact(aliceOnBob.id)?.id, bobChat);
});

Deno.test("a joiner that already has the inviter's key skips to vc-request-with-auth", async () => {
  const alice = await testAccount(ALICE, "Alice");
  const bob = await testAccount(BOB, "Bob");
  introduce(alice, bob);
  await bob.secureJoin.join(alice.secureJoin.createInvite());
  assert.doesNotMatch(new TextDecoder().decode(bob.outbox[0].raw), /Secure-Join: vc-request\r\n/);
  await deliverAll(bob, alice);
  assert.deepEqual(progress(alice, "SecurejoinInviterProgress"), [1000]);
  await deliverAll(alice, bob);
  assert.deepEqual(verifiedContacts(bob), [ALICE]);
});

Deno.test("the inviter adds a group joiner that skips straight to vg-request-with-auth", async () => {
  const alice = await testAccount(ALICE, "Alice");
  const bob = await testAccount(BOB, "Bob");
  introduce(alice, bob);
  const chatId = new Groups(alice.ctx, alice.send)
    .create("Club");
  await bob.secureJoin.join(alice.secureJoin.createInvite(chatId));
  const steps = (await deliverAll(bob, alice)).map((o) => o.kind === "securejoin" && o.step);
  assert.deepEqual(steps, ["vg-request-with-auth"], "no vg-request before it");
  const done = alice.sink.events.filter((e) => e.kind === "SecurejoinInviterProgress");
  assert.deepEqual(done.map((e) => [e.chatId, e.chatType, e.progress]), [[chatId, 120, 1000]]);
  const bobOnAlice = alice.store.contacts.byFingerprint(bob.self.fingerprint)!;
  assert.ok(new GroupMembers(alice.ctx).isMember(chatId, bobOnAlice.id));
  assert.deepEqual(verifiedContacts(alice), [BOB]);
});

Deno.test("a wrong auth token is refused and nothing is verified", async () => {
  const alice = await testAccount(ALICE, "Alice");
  const bob = await testAccount(BOB, "Bob");
  const link = alice.secureJoin.createInvite().replace(/s=[\w-]+/, "s=AAAAAAAAAAAAAAAAAAAAAAAA");
  await bob.secureJoin.join(link);
  await deliverAll(bob, alice);
  await deliverAll(alice, bob);
  alice.sink.take();
  await deliverAll(bob, alice);
  assert.deepEqual(verifiedContacts(alice), []);
  assert.deepEqual(progress(alice, "SecurejoinInviterProgress"), []);
  assert.ok(alice.sink.events.some((e) => e.kind === "Warning" && /refused/.test(e.msg)));
  assert.equal(alice.outbox.length, 0, "no vc-contact-confirm");
});

Deno.test("an auth token works once: a replayed request from another key is refused", async () => {
  const alice = await testAccount(ALICE, "Alice");
  const bob = await testAccount(BOB, "Bob");
  const mallory = await testAccount("mallory@relay.test", "Mallory");
  const link = alice.secureJoin.createInvite();
  introduce(alice, bob);
  introduce(alice, mallory);
  await bob.secureJoin.join(link);
  await mallory.secureJoin.join(link);
  await deliverAll(bob, alice);
  await deliverAll(mallory, alice);
  assert.deepEqual(verifiedContacts(alice).sort(), [BOB]);
});

Deno.test("unknown invite numbers and forged steps are ignored", async () => {
  const alice = await testAccount(ALICE, "Alice");
  const bob = await testAccount(BOB, "Bob");
  const mallory = await testAccount("mallory@relay.test", "Mallory");
  const link = alice.secureJoin.createInvite().replace(/i=[\w-]+/, "i=BBBBBBBBBBBBBBBBBBBBBBBB");
  await bob.secureJoin.join(link);
  await deliverAll(bob, alice);
  assert.equal(alice.outbox.length, 0, "no vc-auth-required for an unknown invite number");

  // A vc-contact-confirm and a vc-auth-required from a key Bob never joined.
  introduce(mallory, bob);
  const to = { addr: BOB, publicKey: bob.self.publicKey };
  mallory.outbox.push(await mallory.composer.renderSecureJoinStep(to, "vc-contact-confirm"));
  mallory.outbox.push(await mallory.composer.renderSecureJoinStep(to, "vc-auth-required"));
  await deliverAll(mallory, bob);
  assert.deepEqual(verifiedContacts(bob), []);
  assert.equal(bob.outbox.length, 0);
  assert.deepEqual(progress(bob, "SecurejoinJoinerProgress"), []);
});

Deno.test("join() refuses its own link, malformed links and group invites with clear errors", async () => {
  const alice = await testAccount(ALICE, "Alice");
  await assert.rejects(
    alice.secureJoin.join(alice.secureJoin.createInvite()),
    (e) => e instanceof GatewayError && /your own invite link/.test(e.message),
  );
  const cases: [string, RegExp][] = [
    ["hello", /not an invite link/],
    ["OPENPGP4FPR:1234#a=b%40c.d&i=AAAAAAAAAAAA&s=AAAAAAAAAAAA", /fingerprint/],
    [`OPENPGP4FPR:${"A".repeat(40)}#a=b%40c.d`, /no auth token/],
    [`OPENPGP4FPR:${"A".repeat(40)}#a=b%40c.d&g=G&x=grp&i=AAAAAAAAAAAA&s=AAAAAAAAAAAA`, /group/],
    [`https://i.delta.chat/#${"A".repeat(40)}&v=3&a=b%40c.d&s=AAAAAAAAAAAA`, /v3-only/],
  ];
  for (const [link, message] of cases) {
    await assert.rejects(
      alice.secureJoin.join(link),
      (e) => e instanceof InvalidParamsError && message.test(e.message),
      link,
    );
  }
});
