/**
 * The drain on a full disk (no relay: a fake IMAP client): the mail stays on the server, the
 * attempt does not count (no quarantine however long the disk stays full), the whole drain pauses
 * with a growing back-off instead of throwing (a throw would rebuild the connection), and once
 * space returns every mail is delivered once and deleted.
 */
import assert from "node:assert/strict";
import { DiskFullError } from "../../src/errors.ts";
import { setLogSink } from "../../src/log.ts";
import {
  DEFAULT_DRAIN_LIMITS,
  DISK_FULL_RETRY_MAX_MS,
  DISK_FULL_RETRY_MIN_MS,
  InboxDrain,
  type KeepAlive,
} from "../../src/transport/inbox_drain.ts";
import { MemorySink, sourceBytes, subjectOf } from "./_memory_sink.ts";
import type { MailSource } from "../../src/mime/mail_source.ts";

type Client = Parameters<InboxDrain["drain"]>[0];

/** A fake INBOX holding `subjects`, one mail each, with the calls the drain makes. */
function fakeInbox(subjects: string[]) {
  const mails = new Map<number, Uint8Array>();
  subjects.forEach((s, i) =>
    mails.set(i + 1, new TextEncoder().encode(`Subject: ${s}\r\n\r\nx\r\n`))
  );
  const mailbox = { exists: mails.size, uidValidity: 7n };
  const client = {
    mailbox,
    async *fetch() {
      for (const [uid, raw] of mails) yield { uid, size: raw.length };
    },
    fetchOne(uid: string) {
      const raw = mails.get(Number(uid));
      return Promise.resolve(raw === undefined ? false : { uid: Number(uid), source: raw });
    },
    messageDelete(uid: string) {
      mails.delete(Number(uid));
      mailbox.exists = mails.size;
      return Promise.resolve(true);
    },
  };
  return { client: client as unknown as Client, mails };
}

/** A MemorySink whose writes fail with DiskFullError while `full` is set. */
class DiskSink extends MemorySink {
  full = false;
  #begins = 0;
  /** While full, every other begin fails itself (the attempt count cannot even be written). */
  override begin(m: Parameters<MemorySink["begin"]>[0]): number {
    if (this.full && this.#begins++ % 2 === 1) {
      throw new DiskFullError("database or disk is full");
    }
    return super.begin(m);
  }
  override deliver(raw: MailSource): Promise<void> {
    if (this.full) {
      this.tried.push(subjectOf(sourceBytes(raw)));
      return Promise.reject(new Error("store", { cause: new DiskFullError("os error 28") }));
    }
    return super.deliver(raw);
  }
}

const keepAlive: KeepAlive = (work) => work;

Deno.test("a full disk pauses the drain: nothing counted, nothing quarantined, then each mail once", async () => {
  const prev = setLogSink(() => {});
  try {
    let now = 0;
    const subjects = ["a", "b", "c"];
    const { client, mails } = fakeInbox(subjects);
    const sink = new DiskSink();
    const drain = new InboxDrain(sink, { ...DEFAULT_DRAIN_LIMITS, maxAttempts: 2 }, () => now);
    sink.full = true;
    const waits: number[] = [];
    // Far more rounds than maxAttempts: a disk-full failure must never use attempts up.
    for (let round = 0; round < 12; round++) {
      assert.equal(await drain.drain(client, keepAlive, () => false), 0); // never throws
      assert.ok(drain.pausedForDisk);
      waits.push(drain.nextRetryIn());
      // Paused: a drain before the retry time touches no mail.
      const tried = sink.tried.length;
      await drain.drain(client, keepAlive, () => false);
      assert.equal(sink.tried.length, tried);
      now += drain.nextRetryIn();
      assert.equal(drain.nextRetryIn(), 0);
    }
    assert.equal(mails.size, 3, "every mail stays on the server");
    assert.deepEqual(sink.quarantined, []);
    assert.deepEqual(sink.givenUp, []);
    for (const n of sink.attempts.values()) assert.equal(n, 0);
    // The back-off grows from the minimum to the cap.
    assert.equal(waits[0], DISK_FULL_RETRY_MIN_MS);
    assert.equal(waits[1], DISK_FULL_RETRY_MIN_MS * 2);
    assert.equal(waits.at(-1), DISK_FULL_RETRY_MAX_MS);
    for (let i = 1; i < waits.length; i++) assert.ok(waits[i] >= waits[i - 1]);

    sink.full = false;
    assert.equal(await drain.drain(client, keepAlive, () => false), 3);
    assert.deepEqual(sink.delivered, subjects);
    assert.equal(mails.size, 0);
    assert.equal(drain.pausedForDisk, false);
    assert.equal(drain.nextRetryIn(), Infinity);
  } finally {
    setLogSink(prev);
  }
});

Deno.test("a mail's own failure still counts and is quarantined after maxAttempts", async () => {
  const prev = setLogSink(() => {});
  try {
    let now = 0;
    const { client, mails } = fakeInbox(["bad"]);
    const sink = new MemorySink((s) => s === "bad");
    const drain = new InboxDrain(sink, { ...DEFAULT_DRAIN_LIMITS, maxAttempts: 2 }, () => now);
    await drain.drain(client, keepAlive, () => false);
    assert.equal(drain.pausedForDisk, false);
    now += drain.nextRetryIn();
    await drain.drain(client, keepAlive, () => false);
    assert.equal(sink.quarantined.length, 1);
    assert.equal(mails.size, 0);
  } finally {
    setLogSink(prev);
  }
});

Deno.test("a drain paused for the disk retries at once when the sink says space is back", async () => {
  const prev = setLogSink(() => {});
  try {
    const { client, mails } = fakeInbox(["a", "b"]);
    const sink = new (class extends DiskSink {
      diskFull(): boolean {
        return this.full;
      }
    })();
    const drain = new InboxDrain(sink, DEFAULT_DRAIN_LIMITS, () => 0); // the clock stands still
    sink.full = true;
    await drain.drain(client, keepAlive, () => false);
    assert.ok(drain.pausedForDisk);
    assert.equal(drain.nextRetryIn(), DISK_FULL_RETRY_MIN_MS);
    sink.full = false; // the store saw a write succeed
    assert.equal(drain.pausedForDisk, false);
    assert.equal(drain.nextRetryIn(), 0);
    assert.equal(await drain.drain(client, keepAlive, () => false), 2);
    assert.equal(mails.size, 0);
  } finally {
    setLogSink(prev);
  }
});
