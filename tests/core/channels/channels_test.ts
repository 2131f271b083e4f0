/** Tests of broadcast channels between in-memory accounts with real keys. */
import assert from "node:assert/strict";
import { ChatType, ContactId } from "../../../src/constants.ts";
import { Channels } from "../../../src/core/channels/channels.ts";
import { Chats } from "../../../src/core/chats/chats.ts";
import { Messages, type SendSteps } from "../../../src/core/chats/messages.ts";
import { deliver, type TestAccount, testAccount } from "../_accounts.ts";

const render = (acc: TestAccount): SendSteps => acc.send;

async function send(acc: TestAccount, chatId: number, text: string) {
  return await new Messages(acc.ctx).createOutgoing({ chatId, text }, render(acc));
}

function texts(acc: TestAccount, chatId: number) {
  return new Messages(acc.ctx).idsOfChat(chatId).map((id) => acc.store.msgs.get(id)!.text);
}

Deno.test("a gateway's channel: subscribers join by invite, posts reach them, a leave is applied", async () => {
  const a = await testAccount("owner@relay.test", "Owner");
  const b = await testAccount("bob@relay.test", "Bob");
  const c = await testAccount("carol@relay.test", "Carol");
  const channel = new Channels(a.ctx, render(a)).create("News");
  const link = a.secureJoin.createInvite(channel);
  assert.match(link, /&b=News&x=[\w-]{24}&j=[\w-]{24}&s=/);
  const joined: number[] = [];
  for (const sub of [b, c]) {
    const chat = await sub.secureJoin.join(link);
    assert.equal(sub.store.chats.get(chat)!.type, ChatType.BROADCAST);
    for (let i = 0; i < 3; i++) {
      await deliver(sub, a);
      await deliver(a, sub);
    }
    assert.equal(
      sub.store.chats.get(chat)!.broadcastSecret,
      a.store.chats.get(channel)!.broadcastSecret,
    );
    assert.deepEqual(texts(sub, chat), ["You joined the channel."]);
    const done = sub.sink.events.filter((e) => e.kind === "SecurejoinJoinerProgress").at(-1);
    assert.deepEqual(done && [done.chatType, done.progress], [130, 1000]);
    joined.push(chat);
  }
  assert.equal(a.store.chats.memberIds(channel).length, 2, "two subscribers, self not listed");
  await send(a, channel, "first post");
  const row = a.store.outbox.due(Date.now() + 10_000).at(-1)!;
  assert.deepEqual([...row.recipients].sort(), ["bob@relay.test", "carol@relay.test"]);
  await deliver(a, b, c);
  assert.deepEqual(texts(b, joined[0]).at(-1), "first post");
  assert.deepEqual(texts(c, joined[1]).at(-1), "first post");
  await assert.rejects(() => send(b, joined[0], "may I?"), /only its owner posts/);
  assert.equal(new Chats(b.ctx).canSend(b.store.chats.get(joined[0])!), false);
  // Carol leaves: the owner drops her without a past-member entry; her posts no longer open.
  await new Channels(c.ctx, render(c)).leave(joined[1]);
  await deliver(c, a);
  assert.deepEqual(a.store.chats.memberIds(channel).length, 1);
  assert.deepEqual(a.store.chats.pastMemberIds(channel, 0), []);
  await send(a, channel, "second post");
  await deliver(a, b, c);
  assert.equal(texts(b, joined[0]).at(-1), "second post");
  assert.notEqual(texts(c, joined[1]).at(-1), "second post");
  assert.equal(c.store.chats.get(joined[1])!.broadcastSecret, "");
  assert.equal(new Chats(c.ctx).selfInChat(c.store.chats.get(joined[1])!), false);
  assert.equal(b.store.chats.get(joined[0])!.ownerId !== ContactId.SELF, true);
});
