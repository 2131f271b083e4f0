/**
 * Tests of InboxReception, the IMAP drain's sink: attempts counted and cleared in the store, one
 * INFO line per received mail (ids and sizes, no content), the record of a given-up mail, the
 * size of each mail told to the collector of burst garbage, the quarantine of a mail that kept
 * failing and the operator's retries of it (one at a time with the drain's deliveries).
 */
import assert from "node:assert/strict";
import { Chats } from "../../../src/core/chats/chats.ts";
import { InboxReception, receivedMailCap } from "../../../src/core/receive/inbox_reception.ts";
import { ConfigKey } from "../../../src/store/mod.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { Messages } from "../../../src/core/chats/messages.ts";
import type { ReceiveOutcome, Receiver } from "../../../src/core/receive/pipeline.ts";
import { GatewayError } from "../../../src/errors.ts";
import { BURST_GC, BurstGc } from "../../../src/memory/burst_gc.ts";
import { setLogSink } from "../../../src/log.ts";
import { mailBytes } from "../../../src/mime/mail_source.ts";
import { introduce, type TestAccount, testAccount } from "../_accounts.ts";
import { NOW_MS, NOW_S } from "../_messaging.ts";

const MAIL = { uid: 4, uidValidity: "77", size: 0 };

/** Alice's message `text` to Bob as the relay would hand it to Bob (Alice marked it sent). */
async function sentMail(a: TestAccount, b: TestAccount, text: string): Promise<Uint8Array> {
  const { bOnA } = introduce(a, b);
  const chatId = new Chats(a.ctx).getOrCreate1to1(bOnA).chatId;
  const msgId = await new Messages(a.ctx).createOutgoing(
    { chatId, text },
    a.send,
  );
  const row = a.store.outbox.due(Date.now()).find((r) => r.msgId === msgId)!;
  new MessageStates(a.ctx).outboxSent(row.id);
  return row.raw;
}

/** Runs `fn` with the log captured; returns the lines. */
async function logLines(fn: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    await fn();
  } finally {
    setLogSink(prev);
  }
  return lines;
}

Deno.test("InboxReception.deliver() stores the mail, clears its attempts, logs one INFO line", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const raw = await sentMail(a, b, "secret words");

  const reception = new InboxReception(b.ctx, b.receiver);
  assert.equal(reception.begin(MAIL), 0);
  const lines = await logLines(() =>
    reception.deliver(mailBytes(raw), { ...MAIL, size: raw.length })
  );
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
  await reception.deliver(mailBytes(junk), { ...MAIL, size: junk.length }); // recorded as a receive error
  assert.deepEqual(noted, [junk.length]);
  assert.equal(b.store.receiveErrors.list().length, 1);

  const fail = () => Promise.reject(new Error("disk full"));
  const failing = { receive: fail, receiveMail: fail } as unknown as Receiver;
  const broken = new InboxReception(b.ctx, failing, { noteGarbage: (n) => noted.push(n) });
  await assert.rejects(
    broken.deliver(mailBytes(junk), { ...MAIL, size: junk.length }),
    /disk full/,
  );
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
  await reception.deliver(mailBytes(mail(1)), { ...MAIL, uid: 1 });
  assert.equal(timers.length, 0, "2 MiB is under the threshold");
  await reception.deliver(mailBytes(mail(2)), { ...MAIL, uid: 2 });
  assert.equal(timers.length, 1, "4 MiB of mail schedules one collection");
  assert.equal(timers[0].ms, BURST_GC.quietMs);
  await reception.deliver(mailBytes(mail(3)), { ...MAIL, uid: 3 });
  timers.shift()!.run(); // a mail came during the quiet period: the burst goes on
  assert.equal(collections, 0);
  assert.equal(timers.length, 1);
  timers.shift()!.run(); // a quiet period without mail
  assert.equal(collections, 1);
  assert.equal(timers.length, 0, "nothing more is scheduled while idle");
});

/** A receiver stub: `receive` answers what `run` says, and notes each mail's Subject. */
function stubReceiver(run: (subject: string) => Promise<ReceiveOutcome>): Receiver {
  return {
    receive: (raw: Uint8Array) =>
      run(/^Subject: (.*)$/m.exec(new TextDecoder().decode(raw))?.[1].trim() ?? "?"),
  } as unknown as Receiver;
}

/** A plain mail with a Message-ID, a Subject and a body. */
function plainMail(id: string, subject: string, body = "private body text"): Uint8Array {
  return new TextEncoder().encode(
    `From: <x@relay.test>\r\nMessage-ID: <${id}>\r\nSubject: ${subject}\r\n\r\n${body}\r\n`,
  );
}

Deno.test("InboxReception.quarantine() keeps the whole mail with its Message-ID and attempts", async () => {
  const b = await testAccount("bob@relay.test", "Bob", undefined, 0, () => NOW_MS);
  const reception = new InboxReception(b.ctx, b.receiver);
  const raw = plainMail("stuck-1@relay.test", "stuck", "secret words");
  const mail = { ...MAIL, size: raw.length };
  reception.begin(mail);
  reception.failed(mail, "no key yet");
  reception.begin(mail);
  reception.failed(mail, "no key yet");
  reception.begin(mail);
  b.sink.take();
  const published: { attempts: number; kept: number; inTx: boolean }[] = [];
  b.sink.onPublish = () =>
    published.push({
      attempts: b.store.receiveAttempts.attempts("77:4"),
      kept: b.store.quarantine.count(),
      inTx: b.ctx.tx.active,
    });
  const lines = await logLines(() => reception.quarantine(mail, "failed 3 times: no key", raw));

  const [kept] = b.store.quarantine.list();
  assert.deepEqual(kept, {
    id: kept.id,
    messageId: "stuck-1@relay.test",
    reason: "failed 3 times: no key",
    attempts: 3,
    size: raw.length,
    quarantinedAt: NOW_S,
  });
  assert.deepEqual(b.store.quarantine.raw(kept.id), raw, "the mail whole, byte for byte");
  assert.equal(b.store.receiveAttempts.attempts("77:4"), 0, "attempts cleared");
  assert.deepEqual(b.sink.take(), [{
    kind: "MailQuarantined",
    quarantineId: kept.id,
    messageId: "stuck-1@relay.test",
    reason: "failed 3 times: no key",
  }]);
  assert.deepEqual(published, [{ attempts: 0, kept: 1, inTx: false }], "after the commit");
  assert.equal(b.store.receiveErrors.count(), 0, "not recorded as a receive error");
  const warn = lines.filter((l) => / WARN {2}\[receive\] mail quarantined /.test(l));
  assert.equal(warn.length, 1, lines.join("\n"));
  assert.match(warn[0], /message_id="stuck-1@relay.test"/);
  assert.match(warn[0], new RegExp(`bytes=${raw.length}`));
  assert.ok(!lines.some((l) => l.includes("secret words") || l.includes("Subject")), "no content");
});

Deno.test("InboxReception.retryQuarantined() stores a mail that now succeeds and drops it", async () => {
  const a = await testAccount("alice@relay.test", "Alice");
  const b = await testAccount("bob@relay.test", "Bob");
  const raw = await sentMail(a, b, "kept for later");
  const reception = new InboxReception(b.ctx, b.receiver);
  await reception.quarantine({ ...MAIL, size: raw.length }, "failed 5 times: disk full", raw);
  const [kept] = b.store.quarantine.list();
  assert.equal(b.store.countMessages(), 0);
  b.sink.take();

  assert.deepEqual(await reception.retryQuarantined(kept.id), {
    outcome: "received",
    kind: "message",
  });
  assert.equal(b.store.countMessages(), 1, "stored");
  assert.equal(b.store.msgs.get(b.store.msgs.freshIds()[0])!.text, "kept for later");
  assert.equal(b.store.quarantine.count(), 0, "it left the quarantine");
  assert.equal(b.store.quarantine.raw(kept.id), undefined);
  assert.ok(b.sink.take().some((e) => e.kind === "IncomingMsg"));
});

Deno.test("InboxReception.retryQuarantined() keeps a mail that fails again, one attempt more", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  let failure = "disk full";
  const reception = new InboxReception(
    b.ctx,
    stubReceiver(() => Promise.reject(new Error(failure))),
  );
  const raw = plainMail("again-1@relay.test", "again");
  const mail = { ...MAIL, size: raw.length };
  for (let i = 0; i < 5; i++) reception.begin(mail);
  await reception.quarantine(mail, "failed 5 times: disk full", raw);
  const [kept] = b.store.quarantine.list();
  assert.equal(kept.attempts, 5);

  failure = "database is locked";
  assert.deepEqual(await reception.retryQuarantined(kept.id), {
    outcome: "quarantined",
    reason: "database is locked",
  });
  assert.deepEqual(b.store.quarantine.get(kept.id), {
    ...kept,
    attempts: 6,
    reason: "database is locked",
  });
  assert.deepEqual(b.store.quarantine.raw(kept.id), raw, "still whole");
  assert.equal((await reception.retryQuarantined(kept.id)).outcome, "quarantined");
  assert.equal(b.store.quarantine.get(kept.id)!.attempts, 7);
  assert.equal(b.store.receiveErrors.count(), 0);
});

Deno.test("InboxReception.retryQuarantined() of an unknown id throws GatewayError naming it", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  let called = 0;
  const reception = new InboxReception(
    b.ctx,
    stubReceiver(() => {
      called++;
      return Promise.resolve({ kind: "ignored", reason: "stub" });
    }),
  );
  await assert.rejects(
    reception.retryQuarantined(4242),
    (err) => err instanceof GatewayError && /4242/.test(err.message),
  );
  assert.equal(called, 0, "nothing ran");
});

Deno.test("InboxReception.retryQuarantined() waits for the drain's mail in progress", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  const gate = Promise.withResolvers<void>();
  const order: string[] = [];
  const reception = new InboxReception(
    b.ctx,
    stubReceiver(async (subject) => {
      order.push(`start ${subject}`);
      if (subject === "drained") await gate.promise;
      order.push(`end ${subject}`);
      return { kind: "ignored", reason: "stub" };
    }),
  );
  const stuck = plainMail("stuck-2@relay.test", "quarantined");
  await reception.quarantine({ ...MAIL, uid: 8, size: stuck.length }, "failed 5 times", stuck);
  const [kept] = b.store.quarantine.list();

  const drained = plainMail("new-1@relay.test", "drained");
  const delivering = reception.deliver(mailBytes(drained), { ...MAIL, size: drained.length });
  const retrying = reception.retryQuarantined(kept.id);
  await new Promise((r) => setTimeout(r, 0)); // let every step that could run, run
  assert.deepEqual(order, ["start drained"], "the retry has not begun");
  gate.resolve();
  await delivering;
  assert.deepEqual(await retrying, { outcome: "received", kind: "ignored" });
  assert.deepEqual(order, [
    "start drained",
    "end drained",
    "start quarantined",
    "end quarantined",
  ]);
  assert.equal(b.store.quarantine.count(), 0);
});

Deno.test("InboxReception.retryQuarantined() says so when the mail was dropped while it ran", async () => {
  const b = await testAccount("bob@relay.test", "Bob");
  const raw = new TextEncoder().encode("From: <x@y>\r\nMessage-ID: <gone-1@y>\r\n\r\nA");
  const id = b.store.quarantine.add({
    messageId: "gone-1@y",
    reason: "r",
    attempts: 5,
    raw,
    at: 1,
  });
  const reception = new InboxReception(
    b.ctx,
    stubReceiver(() => {
      b.store.quarantine.remove(id); // delete_quarantined_mail while the retry runs
      return Promise.reject(new Error("still failing"));
    }),
  );
  await assert.rejects(
    reception.retryQuarantined(id),
    (err) => err instanceof GatewayError && /dropped/.test(err.message),
  );
  assert.equal(b.store.quarantine.count(), 0);
});

Deno.test("the fetch cap is twice the relay's stored limit, at least 64 MiB", async () => {
  const MiB = 1024 * 1024;
  assert.equal(receivedMailCap(undefined), 64 * MiB);
  assert.equal(receivedMailCap(NaN), 64 * MiB);
  assert.equal(receivedMailCap(30 * MiB), 64 * MiB);
  assert.equal(receivedMailCap(50 * MiB), 100 * MiB);
  const b = await testAccount("bob@relay.test", "Bob", "/tmp/blobs-of-bob");
  const reception = new InboxReception(b.ctx, b.receiver);
  assert.equal(reception.spool.dir, "/tmp/blobs-of-bob");
  assert.equal(reception.spool.maxMailBytes(), 64 * MiB);
  b.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(100 * MiB));
  assert.equal(reception.spool.maxMailBytes(), 200 * MiB);
});
