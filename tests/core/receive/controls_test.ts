/**
 * Tests of reactions, edits and delete requests from peers (Delta Chat's wire form, sealed with
 * real keys): who may do what, the stored result, and the events.
 */
import assert from "node:assert/strict";
import { Chats } from "../../../src/core/chats/chats.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { Messages } from "../../../src/core/chats/messages.ts";
import { OutgoingControls } from "../../../src/core/send/controls.ts";
import { renderChatMessage } from "../../../src/mime/factory.ts";
import { introduce, type TestAccount, testAccount } from "../_accounts.ts";

async function trio() {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const c = await testAccount("carol@relay.test", "Carol");
  const ab = introduce(a, b);
  introduce(c, b); // Carol: a key Bob knows, but not in Alice and Bob's chat
  const aChat = new Chats(a.ctx).getOrCreate1to1(ab.bOnA).chatId;
  const bChat = new Chats(b.ctx).getOrCreate1to1(ab.aOnB).chatId;
  return { a, b, c, ...ab, aChat, bChat };
}

/** `from` sends `text` to `to` through send_msg's path; `to` stores it. Returns both ids. */
async function chat(from: TestAccount, chatId: number, to: TestAccount, text: string) {
  const msgId = await new Messages(from.ctx).createOutgoing(
    { chatId, text },
    from.send,
  );
  const row = from.store.outbox.due(Date.now()).find((r) => r.msgId === msgId)!;
  new MessageStates(from.ctx).outboxSent(row.id);
  const got = await to.receiver.receive(row.raw);
  assert.equal(got.kind, "message");
  const rfc724Mid = from.store.msgs.get(msgId)!.rfc724Mid;
  return { sentId: msgId, gotId: (got as { msgId: number }).msgId, rfc724Mid };
}

/** A mail from `from` to `to` as Delta Chat sends a control mail: extra headers, given text. */
async function control(
  from: TestAccount,
  to: TestAccount,
  text: string,
  extra: [string, string][],
): Promise<Uint8Array> {
  const messageId = `${crypto.randomUUID()}@relay.test`;
  const recipient = { addr: to.addr, publicKey: to.self.publicKey };
  const inner = renderChatMessage({
    from: { addr: from.addr, name: from.self.name },
    to: [recipient],
    messageId: `<${messageId}>`,
    date: new Date(),
    subject: "[...]",
    autocryptKey: from.self.publicKey,
    extra,
    text,
  });
  return (await from.composer.seal(inner, [recipient], messageId)).raw;
}

Deno.test("a reaction to our message is stored per contact, replaced, removed, with events", async () => {
  const { a, b, bChat, aOnB } = await trio();
  // Bob's message to Alice; Alice reacts to it.
  const { sentId, gotId, rfc724Mid } = await chat(b, bChat, a, "lunch?");
  assert.ok(gotId > 0);
  const react = (emoji: string) =>
    control(a, b, emoji, [["Content-Disposition", "reaction"], ["In-Reply-To", `<${rfc724Mid}>`]]);
  b.sink.take();
  const first = await b.receiver.receive(await react("👍"));
  assert.deepEqual(first, { kind: "control", action: "reaction", changed: 1 });
  assert.deepEqual(b.sink.take(), [
    { kind: "ReactionsChanged", chatId: bChat, msgId: sentId, contactId: aOnB },
    {
      kind: "IncomingReaction",
      chatId: bChat,
      contactId: aOnB,
      msgId: sentId,
      reaction: "👍",
    },
  ]);
  assert.deepEqual(
    new Messages(b.ctx).details(sentId)!.reactions.map((r) => [r.contactId, r.reaction]),
    [[aOnB, "👍"]],
  );
  assert.equal(b.store.msgs.stampsOfChat(bChat).length, 1, "a reaction is not a chat message");
  await b.receiver.receive(await react("❤️ and the rest is ignored"));
  assert.equal(new Messages(b.ctx).details(sentId)!.reactions[0].reaction, "❤️");
  await b.receiver.receive(await react(""));
  assert.deepEqual(new Messages(b.ctx).details(sentId)!.reactions, []);
});

Deno.test("only its sender can edit or delete a message; others' requests change nothing", async () => {
  const { a, b, c, aChat, bChat } = await trio();
  const { gotId, rfc724Mid } = await chat(a, aChat, b, "teh typo");
  const mine = await chat(b, bChat, a, "Bob's own");
  // Carol (a known key, not in the chat) and Bob's own message are out of Alice's reach.
  assert.deepEqual(
    await b.receiver.receive(await control(c, b, "✏️hacked", [["Chat-Edit", `<${rfc724Mid}>`]])),
    { kind: "control", action: "edit", changed: 0 },
  );
  assert.deepEqual(
    await b.receiver.receive(
      await control(a, b, "", [["Chat-Delete", `<${mine.rfc724Mid}>`]]),
    ),
    { kind: "control", action: "delete", changed: 0 },
  );
  assert.ok(b.store.msgs.get(mine.sentId), "Bob's message is still there");
  // Alice edits her message: the quote Delta Chat puts above and the ✏️ prefix are not text.
  b.sink.take();
  const edit = await control(a, b, "> teh typo\n\n✏️the typo, fixed", [
    ["Chat-Edit", `<${rfc724Mid}>`],
  ]);
  assert.deepEqual(await b.receiver.receive(edit), { kind: "control", action: "edit", changed: 1 });
  const edited = b.store.msgs.get(gotId)!;
  assert.equal(edited.text, "the typo, fixed");
  assert.equal(edited.edited, true);
  assert.deepEqual(b.sink.take(), [{ kind: "MsgsChanged", chatId: bChat, msgId: gotId }]);
  // Alice deletes it for everyone.
  const del = await control(a, b, "🚮", [["Chat-Delete", `<${rfc724Mid}> <unknown@x>`]]);
  assert.deepEqual(await b.receiver.receive(del), {
    kind: "control",
    action: "delete",
    changed: 1,
  });
  assert.equal(b.store.msgs.get(gotId), undefined);
  assert.deepEqual(b.sink.take(), [{ kind: "MsgDeleted", chatId: bChat, msgId: gotId }]);
});

Deno.test("a reply's quote is kept apart from its text", async () => {
  const { a, b, aChat } = await trio();
  const { gotId } = await chat(a, aChat, b, "> what Bob said\n\nmy answer");
  const m = b.store.msgs.get(gotId)!;
  assert.equal(m.text, "my answer");
  assert.equal(m.quote, "what Bob said");
});

Deno.test("our reaction mail is read back as a reaction by the peer (renderControl → receive)", async () => {
  const { a, b, bChat, aOnB } = await trio();
  const { sentId, gotId } = await chat(b, bChat, a, "ship it?");
  const controls = new OutgoingControls(a.ctx, (c, to, t) => a.composer.renderControl(c, to, t));
  await controls.react(gotId, "🚀");
  assert.deepEqual(a.store.reactions.forMessage(gotId).map((r) => [r.contactId, r.reaction]), [
    [1, "🚀"],
  ]);
  const [row] = a.store.outbox.due(Date.now() + 1000);
  assert.equal(row.msgId, 0, "a reaction is no chat message of its own");
  b.sink.take();
  assert.deepEqual(await b.receiver.receive(row.raw), {
    kind: "control",
    action: "reaction",
    changed: 1,
  });
  assert.deepEqual(b.sink.take().at(-1), {
    kind: "IncomingReaction",
    chatId: bChat,
    contactId: aOnB,
    msgId: sentId,
    reaction: "🚀",
  });
});

Deno.test("our edit and delete-for-everyone mails are applied by the peer", async () => {
  const { a, b, aChat } = await trio();
  const { sentId, gotId } = await chat(a, aChat, b, "draft");
  const edits = new OutgoingControls(a.ctx, (c, to, t) => a.composer.renderControl(c, to, t));
  const queued = () => a.store.outbox.due(Date.now() + 1000).filter((r) => r.msgId === 0);
  await edits.edit(sentId, "final");
  assert.deepEqual(await b.receiver.receive(queued().at(-1)!.raw), {
    kind: "control",
    action: "edit",
    changed: 1,
  });
  assert.deepEqual([b.store.msgs.get(gotId)!.text, b.store.msgs.get(gotId)!.edited], [
    "final",
    true,
  ]);
  await edits.deleteForAll([sentId]);
  assert.equal(a.store.msgs.get(sentId), undefined);
  assert.deepEqual(await b.receiver.receive(queued().at(-1)!.raw), {
    kind: "control",
    action: "delete",
    changed: 1,
  });
  assert.equal(b.store.msgs.get(gotId), undefined);
});

Deno.test("a reply we send quotes its message; the peer splits the quote off and finds the parent", async () => {
  const { a, b, aChat, bChat } = await trio();
  const asked = await chat(b, bChat, a, "Lunch at noon?\nOr later?");
  const msgId = await new Messages(a.ctx).createOutgoing(
    { chatId: aChat, text: "Noon works", quotedMessageId: asked.gotId },
    a.send,
  );
  assert.equal(a.store.msgs.get(msgId)!.quote, "Lunch at noon?\nOr later?");
  const row = a.store.outbox.due(Date.now() + 1000).find((r) => r.msgId === msgId)!;
  const got = await b.receiver.receive(row.raw) as { msgId: number };
  const d = new Messages(b.ctx).details(got.msgId)!;
  assert.deepEqual([d.message.text, d.message.quote, d.parentId], [
    "Noon works",
    "Lunch at noon?\nOr later?",
    asked.sentId,
  ]);
  await assert.rejects(
    new Messages(a.ctx).createOutgoing(
      { chatId: aChat, text: "x", quotedMessageId: 999 },
      a.send,
    ),
    /cannot quote message 999: message not found/,
  );
});

Deno.test("a system message (Chat-Content, group changes) is an info message, not user text", async () => {
  const { a, b, bChat } = await trio();
  b.sink.take();
  const got = await b.receiver.receive(
    await control(a, b, "Message deletion timer is set to 1 day.", [
      ["Chat-Content", "ephemeral-timer-changed"],
      ["Ephemeral-Timer", "86400"],
      ["Chat-Disposition-Notification-To", a.addr],
    ]),
  ) as { kind: string; msgId: number };
  assert.equal(got.kind, "message");
  const m = b.store.msgs.get(got.msgId)!;
  assert.deepEqual([m.isInfo, m.systemType, m.mdnRequested], [
    true,
    "EphemeralTimerChanged",
    false,
  ]);
  assert.deepEqual(b.sink.take(), [
    { kind: "ChatEphemeralTimerModified", chatId: bChat, timer: 86400 },
    { kind: "MsgsChanged", chatId: bChat, msgId: got.msgId },
  ]);
});

Deno.test("the peer's disappearing-messages timer is followed and echoed on our replies", async () => {
  const { a, b, aChat, bChat } = await trio();
  await b.receiver.receive(await control(a, b, "timer on", [["Ephemeral-Timer", "3600"]]));
  assert.equal(b.store.chats.get(bChat)!.ephemeralTimer, 3600);
  assert.equal(a.store.chats.get(aChat)!.ephemeralTimer, 0);
  // Bob's reply carries it: Alice's side reads 3600 from it (without the echo it would read 0).
  await chat(b, bChat, a, "ok");
  assert.equal(a.store.chats.get(aChat)!.ephemeralTimer, 3600);
  // A message without the header turns it off again (as Delta Chat reads it).
  await b.receiver.receive(await control(a, b, "timer off", []));
  assert.equal(b.store.chats.get(bChat)!.ephemeralTimer, 0);
});
