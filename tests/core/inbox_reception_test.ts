/**
 * Tests of InboxReception, the IMAP drain's sink: attempts counted and cleared in the store, one
 * INFO line per received mail (ids and sizes, no content), and the record of a given-up mail.
 */
import assert from "node:assert/strict";
import { Chats } from "../../src/core/chats.ts";
import { InboxReception } from "../../src/core/inbox_reception.ts";
import { MessageStates } from "../../src/core/message_states.ts";
import { Messages } from "../../src/core/messages.ts";
import { setLogSink } from "../../src/log.ts";
import { introduce, testAccount } from "./_accounts.ts";

const MAIL = { uid: 4, uidValidity: "77", size: 0 };

Deno.test("InboxReception.deliver() stores the mail, clears its attempts, logs one INFO line", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const { bOnA } = introduce(a, b);
  const chatId = new Chats(a.ctx).getOrCreate1to1(bOnA).chatId;
  const msgId = await new Messages(a.ctx).createOutgoing(
    { chatId, text: "secret words" },
    (d, c, r) => a.composer.renderChat(d, c, r),
  );
  const row = a.store.outbox.due(Date.now()).find((r) => r.msgId === msgId)!;
  new MessageStates(a.ctx).outboxSent(row.id);

  const reception = new InboxReception(b.ctx, b.receiver);
  assert.equal(reception.begin(MAIL), 0);
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    await reception.deliver(row.raw, { ...MAIL, size: row.raw.length });
  } finally {
    setLogSink(prev);
  }
  assert.equal(b.store.receiveAttempts.attempts("77:4"), 0, "attempts cleared after commit");
  assert.equal(b.store.countMessages(), 1, "stored");
  const info = lines.filter((l) => / INFO {2}\[receive\] mail processed /.test(l));
  assert.equal(info.length, 1, lines.join("\n"));
  assert.match(
    info[0],
    /outcome="message" stored="created" msg_id=\d+ chat_id=\d+ uid=4 bytes=\d+/,
  );
  assert.ok(!lines.some((l) => l.includes("secret words")), "no content in the log");
});

Deno.test("InboxReception.giveUp() records the mail with its Message-ID, size and last error", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  const reception = new InboxReception(b.ctx, b.receiver);
  const mail = { uid: 9, uidValidity: "77", size: 30_000_000 };
  reception.begin(mail);
  reception.failed(mail, "out of memory");
  b.sink.take();
  const head = new TextEncoder().encode("From: <x@y>\r\nMessage-ID: <huge-1@y>\r\n\r\nAAAA");
  await reception.giveUp(mail, "failed 3 times", head);
  const [rec] = b.store.receiveErrors.list();
  assert.equal(rec.messageId, "huge-1@y");
  assert.equal(rec.size, 30_000_000);
  assert.equal(rec.raw, null, "only the head was at hand: no raw kept");
  assert.equal(rec.reason, "failed 3 times (last error: out of memory)");
  assert.equal(b.store.receiveAttempts.attempts("77:9"), 0);
  assert.deepEqual(b.sink.take().map((e) => e.kind), ["Warning"]);
});
