/**
 * Tests of InboxReception, the IMAP drain's sink: attempts counted and cleared in the store, one
 * INFO line per received mail (ids and sizes, no content), the record of a given-up mail, and
 * the size of each mail told to the collector of burst garbage.
 */
import assert from "node:assert/strict";
import { Chats } from "../../src/core/chats.ts";
import { InboxReception } from "../../src/core/inbox_reception.ts";
import { MessageStates } from "../../src/core/message_states.ts";
import { Messages } from "../../src/core/messages.ts";
import type { Receiver } from "../../src/core/receive.ts";
import { BURST_GC, BurstGc } from "../../src/memory/burst_gc.ts";
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

Deno.test("InboxReception tells noteGarbage the size of every mail it read, also one that failed", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  const noted: number[] = [];
  const reception = new InboxReception(b.ctx, b.receiver, { noteGarbage: (n) => noted.push(n) });
  const junk = new TextEncoder().encode(
    "From: <x@y>\r\nMessage-ID: <junk-1@y>\r\n\r\n" + "A".repeat(3 * 1024 * 1024),
  );
  await reception.deliver(junk, { ...MAIL, size: junk.length }); // recorded as a receive error
  assert.deepEqual(noted, [junk.length]);
  assert.equal(b.store.receiveErrors.list().length, 1);

  const failing = { receive: () => Promise.reject(new Error("disk full")) } as unknown as Receiver;
  const broken = new InboxReception(b.ctx, failing, { noteGarbage: (n) => noted.push(n) });
  await assert.rejects(broken.deliver(junk, { ...MAIL, size: junk.length }), /disk full/);
  assert.deepEqual(noted, [junk.length, junk.length], "a failed mail left its copies too");

  const head = new TextEncoder().encode("From: <x@y>\r\nMessage-ID: <huge-2@y>\r\n\r\nAAAA");
  await reception.giveUp({ uid: 5, uidValidity: "77", size: 50_000_000 }, "too large", head);
  assert.deepEqual(noted, [junk.length, junk.length, head.length], "only the head was fetched");
});

Deno.test("a burst of large mails ends with one collection once reception has been quiet", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  const timers: { run: () => void; ms: number }[] = [];
  let collections = 0;
  const burst = new BurstGc({
    ...BURST_GC,
    gc: () => collections++,
    startTimer: (run, ms) => {
      const t = { run, ms };
      timers.push(t);
      return () => timers.splice(timers.indexOf(t), 1);
    },
  });
  const reception = new InboxReception(b.ctx, b.receiver, { noteGarbage: (n) => burst.note(n) });
  const mail = (i: number) =>
    new TextEncoder().encode(
      `From: <x@y>\r\nMessage-ID: <big-${i}@y>\r\n\r\n` + "B".repeat(2 * 1024 * 1024),
    );
  await reception.deliver(mail(1), { ...MAIL, uid: 1 });
  assert.equal(timers.length, 0, "2 MiB is under the threshold");
  await reception.deliver(mail(2), { ...MAIL, uid: 2 });
  assert.equal(timers.length, 1, "4 MiB of mail schedules one collection");
  assert.equal(timers[0].ms, BURST_GC.quietMs);
  await reception.deliver(mail(3), { ...MAIL, uid: 3 });
  timers.shift()!.run(); // a mail came during the quiet period: the burst goes on
  assert.equal(collections, 0);
  assert.equal(timers.length, 1);
  timers.shift()!.run(); // a quiet period without mail
  assert.equal(collections, 1);
  assert.equal(timers.length, 0, "nothing more is scheduled while idle");
});
