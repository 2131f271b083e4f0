/** Tests of storing received messages: dedup by Message-ID, pre/post-message merge, events. */
import assert from "node:assert/strict";
import type { BlobFile } from "../../../src/core/blobs.ts";
import { Chats } from "../../../src/core/chats/chats.ts";
import { type IncomingMessage, Messages } from "../../../src/core/chats/messages.ts";
import { addPeer, type Bench, bench, NOW_S } from "../_messaging.ts";

const BLOB: BlobFile = {
  blob: "0123456789abcdef0123456789abcdef.zip",
  path: "/nonexistent/blobs/0123456789abcdef0123456789abcdef.zip",
  name: "photos.zip",
  mime: "application/zip",
  bytes: 300_000,
};

function setup(): { b: Bench; base: IncomingMessage; messages: Messages } {
  const b = bench();
  const bob = addPeer(b, "bob@relay.test", "b", "Bob");
  const chatId = new Chats(b.ctx).getOrCreate1to1(bob).chatId;
  b.sink.take();
  const base: IncomingMessage = {
    rfc724Mid: "in1@relay.test",
    chatId,
    fromId: bob,
    text: "hello",
    timestampSent: NOW_S - 60,
    fromFingerprint: "B".repeat(40),
  };
  return { b, base, messages: new Messages(b.ctx) };
}

Deno.test("storeIncoming() stores a message once and emits IncomingMsg once", () => {
  const { b, base, messages } = setup();
  const first = messages.storeIncoming(base);
  assert.equal(first.outcome, "created");
  assert.deepEqual(b.sink.take(), [{
    kind: "IncomingMsg",
    chatId: base.chatId,
    msgId: first.msgId,
  }]);
  const again = messages.storeIncoming({ ...base, text: "changed?" });
  assert.deepEqual(again, { msgId: first.msgId, outcome: "duplicate" });
  assert.deepEqual(b.sink.take(), []);
  const m = messages.get(first.msgId)!;
  assert.equal(m.text, "hello");
  assert.equal(m.state, 1);
  assert.equal(m.timestamp, NOW_S - 60);
  assert.equal(m.timestampRcvd, NOW_S);
  assert.equal(b.store.contacts.get(base.fromId)?.lastSeen, NOW_S - 60);
  assert.equal(messages.idByRfc724Mid("<in1@relay.test>"), first.msgId);
  b.store.close();
});

Deno.test("storeIncoming() sorts future-dated mail at receive time and keeps hidden ones quiet", () => {
  const { b, base, messages } = setup();
  const future = messages.storeIncoming({ ...base, timestampSent: NOW_S + 3600 });
  assert.equal(messages.get(future.msgId)?.timestamp, NOW_S);
  assert.equal(messages.get(future.msgId)?.timestampSent, NOW_S + 3600);
  b.sink.take();
  const hidden = messages.storeIncoming({ ...base, rfc724Mid: "sj@relay.test", hidden: true });
  assert.deepEqual(b.sink.take(), []);
  assert.deepEqual(messages.idsOfChat(base.chatId), [future.msgId]);
  assert.equal(b.store.chats.freshCount(base.chatId), 1, "hidden messages are not fresh");
  const own = messages.storeIncoming({
    ...base,
    rfc724Mid: "own@relay.test",
    fromId: 1,
    state: 26,
  });
  assert.deepEqual(b.sink.take(), [{ kind: "MsgsChanged", chatId: base.chatId, msgId: own.msgId }]);
  assert.notEqual(hidden.msgId, own.msgId);
  b.store.close();
});

Deno.test("a post-message after its pre-message fills the pre-message's row", () => {
  const { b, base, messages } = setup();
  const pre = messages.storeIncoming({
    ...base,
    rfc724Mid: "pre@relay.test",
    text: "the photos",
    postMessageId: "post@relay.test",
    announcedFile: { name: "photos.zip", bytes: 300_000, viewtype: "File" },
  });
  const announced = messages.get(pre.msgId)!;
  assert.equal(announced.downloadState, "Available");
  assert.equal(announced.file, "");
  assert.equal(announced.fileName, "photos.zip");
  b.sink.take();
  const post = messages.storeIncoming({
    ...base,
    rfc724Mid: "post@relay.test",
    text: "",
    file: BLOB,
  });
  assert.deepEqual(post, { msgId: pre.msgId, outcome: "merged" });
  assert.deepEqual(b.sink.take(), [{ kind: "MsgsChanged", chatId: base.chatId, msgId: pre.msgId }]);
  const m = messages.get(pre.msgId)!;
  assert.equal(m.text, "the photos");
  assert.equal(m.file, BLOB.blob);
  assert.equal(m.fileBytes, BLOB.bytes);
  assert.equal(m.downloadState, "Done");
  assert.equal(m.viewtype, "File");
  const twice = messages.storeIncoming({ ...base, rfc724Mid: "post@relay.test", file: BLOB });
  assert.deepEqual(twice, { msgId: pre.msgId, outcome: "duplicate" });
  assert.equal(b.store.countMessages(), 1);
  b.store.close();
});

Deno.test("a pre-message after its post-message only adds missing text", () => {
  const { b, base, messages } = setup();
  const post = messages.storeIncoming({
    ...base,
    rfc724Mid: "post@relay.test",
    text: "",
    file: BLOB,
  });
  assert.equal(post.outcome, "created");
  b.sink.take();
  const pre = messages.storeIncoming({
    ...base,
    rfc724Mid: "pre@relay.test",
    text: "the photos",
    postMessageId: "post@relay.test",
    announcedFile: { name: "photos.zip", bytes: 300_000 },
  });
  assert.deepEqual(pre, { msgId: post.msgId, outcome: "merged" });
  assert.equal(messages.get(post.msgId)?.text, "the photos");
  assert.deepEqual(b.sink.take(), [{
    kind: "MsgsChanged",
    chatId: base.chatId,
    msgId: post.msgId,
  }]);
  const again = messages.storeIncoming({
    ...base,
    rfc724Mid: "pre@relay.test",
    postMessageId: "post@relay.test",
  });
  assert.deepEqual(again, { msgId: post.msgId, outcome: "duplicate" });
  assert.equal(b.store.countMessages(), 1);
  assert.deepEqual(b.sink.take(), []);
  b.store.close();
});

Deno.test("storeIncoming() refuses a chat that does not exist", () => {
  const { b, base, messages } = setup();
  assert.throws(() => messages.storeIncoming({ ...base, chatId: 99 }), {
    message: "chat 99 not found",
  });
  b.store.close();
});
