/**
 * SmtpLoop with a fake transport (outcome handling, back-off, wake/stop, pipelining) and against
 * a real relay (delivery, a relay outage without loss or duplicates, a 523 refusal).
 */
import assert from "node:assert/strict";
import { DiskFullError } from "../../src/errors.ts";
import type { GatewayEvent } from "../../src/events/types.ts";
import { setLogSink } from "../../src/log.ts";
import { createImapClient } from "../../src/transport/imap_client.ts";
import { classifySmtpError } from "../../src/transport/smtp_errors.ts";
import {
  type OutboxQueue,
  type OutgoingMail,
  type QueuedMail,
  SmtpLoop,
  type SmtpLoopOptions,
} from "../../src/transport/smtp_loop.ts";
import { NO_RELAY, type Relay, type RelayAccount, startRelay } from "../_helpers/relay.ts";

type Row = QueuedMail & { nextTryAt: number };

/** The outbox in memory, recording every callback. */
class MemoryQueue implements OutboxQueue {
  readonly rows = new Map<number, Row>();
  readonly sentIds: number[] = [];
  readonly retries: { id: number; error: string; nextTryAt: number }[] = [];
  readonly gaveUps: { id: number; error: string }[] = [];
  /** What each `pullBack()` changed. */
  readonly pullBacks: number[] = [];
  #nextId = 1;

  add(raw = "Subject: x\r\n\r\nhi\r\n", from = "a@x.test", to = ["b@x.test"], at = 0): number {
    const id = this.#nextId++;
    const bytes = new TextEncoder().encode(raw);
    this.rows.set(id, {
      id,
      envelopeFrom: from,
      recipients: to,
      raw: bytes,
      attempts: 0,
      nextTryAt: at,
    });
    return id;
  }
  due(nowMs: number, limit: number): readonly QueuedMail[] {
    return [...this.rows.values()].filter((r) => r.nextTryAt <= nowMs)
      .sort((a, b) => a.nextTryAt - b.nextTryAt || a.id - b.id).slice(0, limit);
  }
  nextDueAt(): number | undefined {
    const times = [...this.rows.values()].map((r) => r.nextTryAt);
    return times.length ? Math.min(...times) : undefined;
  }
  pullBack(nowMs: number, maxAheadMs: number): number {
    let n = 0;
    for (const [id, row] of this.rows) {
      if (row.nextTryAt <= nowMs + maxAheadMs) continue;
      this.rows.set(id, { ...row, nextTryAt: nowMs });
      n++;
    }
    this.pullBacks.push(n);
    return n;
  }
  sent(id: number): void {
    assert.ok(this.rows.delete(id), `sent(${id}) for a queued row`);
    this.sentIds.push(id);
  }
  retry(id: number, error: string, nextTryAt: number, counted: boolean): void {
    const row = this.rows.get(id)!;
    this.rows.set(id, { ...row, attempts: row.attempts + (counted ? 1 : 0), nextTryAt });
    this.retries.push({ id, error, nextTryAt });
  }
  gaveUp(id: number, error: string): void {
    assert.ok(this.rows.delete(id), `gaveUp(${id}) for a queued row`);
    this.gaveUps.push({ id, error });
  }
}

/** A fake transport: `outcome` decides each send; counts sends in flight and transports. */
function fakeTransport(outcome: (mail: OutgoingMail) => Promise<void> = () => Promise.resolve()) {
  const stats = { created: 0, closed: 0, inflight: 0, maxInflight: 0, mails: [] as OutgoingMail[] };
  const factory = () => {
    stats.created++;
    return {
      async sendMail(mail: OutgoingMail) {
        stats.mails.push(mail);
        stats.maxInflight = Math.max(stats.maxInflight, ++stats.inflight);
        try {
          await outcome(mail);
          return { rejected: [] };
        } finally {
          stats.inflight--;
        }
      },
      close: () => void stats.closed++,
    };
  };
  return { factory, stats };
}

/** A nodemailer-like error. */
function smtpError(code: string, command: string, response?: string, message = "Failed"): Error {
  const err = Object.assign(new Error(message), { code, command, response });
  return response ? Object.assign(err, { responseCode: Number(response.slice(0, 3)) }) : err;
}

/**
 * A wall clock and a monotonic clock the test moves: `pass()` moves both (time passes), `jump()`
 * the wall clock alone (set by hand or by NTP).
 */
function testClocks(wall = 1_000_000) {
  const c = { wall, mono: 0 };
  return {
    now: () => c.wall,
    monotonic: () => c.mono,
    pass(ms: number) {
      c.wall += ms;
      c.mono += ms;
    },
    jump(ms: number) {
      c.wall += ms;
    },
  };
}

const ENDPOINT = { host: "127.0.0.1", port: 1, security: "ssl" as const, user: "a@x.test" };
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves like `p`, or fails when it takes longer than `ms`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `cond()` holds (checking every 100 ms) or fails after `ms`. */
async function until(
  cond: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(100);
  }
}

/** Runs `fn` with a started loop (logs muted) and stops it afterwards. */
async function withLoop(
  opts: Partial<SmtpLoopOptions> & { queue: OutboxQueue },
  fn: (loop: SmtpLoop) => Promise<void>,
): Promise<void> {
  const prev = setLogSink(() => {});
  const loop = new SmtpLoop({ endpoint: ENDPOINT, password: "pw", ...opts });
  const ac = new AbortController();
  loop.start(ac.signal);
  try {
    await fn(loop);
  } finally {
    ac.abort();
    await loop.stop();
    setLogSink(prev);
  }
}

Deno.test("classifySmtpError: 5xx to the mail is permanent, session trouble is a connection failure", () => {
  assert.equal(
    classifySmtpError(smtpError("EMESSAGE", "DATA", "523 5.7.1 Encryption Needed")),
    "permanent",
  );
  assert.equal(
    classifySmtpError(smtpError("EENVELOPE", "RCPT TO", "550 5.1.1 No such user")),
    "permanent",
  );
  assert.equal(classifySmtpError(smtpError("EENVELOPE", "API")), "permanent");
  assert.equal(
    classifySmtpError(smtpError("EENVELOPE", "RCPT TO", "451 4.3.0 Try later")),
    "transient",
  );
  assert.equal(
    classifySmtpError(smtpError("EENVELOPE", "MAIL FROM", "503 5.5.1 Bad sequence")),
    "transient",
  );
  assert.equal(
    classifySmtpError(smtpError("EAUTH", "AUTH PLAIN", "535 5.7.8 Auth failed")),
    "connection",
  );
  assert.equal(
    classifySmtpError(smtpError("ECONNECTION", "CONN", "554 5.3.2 Restarting")),
    "connection",
  );
  assert.equal(
    classifySmtpError(smtpError("EENVELOPE", "MAIL FROM", "421 4.3.2 Bye")),
    "connection",
  );
  for (const code of ["ECONNECTION", "ETIMEDOUT", "ESOCKET", "ECONNREFUSED", "ETLS"]) {
    assert.equal(classifySmtpError(smtpError(code, "CONN")), "connection", code);
  }
  assert.equal(classifySmtpError(new Error("odd")), "transient");
});

Deno.test("SmtpLoop drains every due mail on start and reports it sent", async () => {
  const queue = new MemoryQueue();
  const ids = [1, 2, 3, 4, 5].map(() =>
    queue.add("Subject: s\r\n\r\nbody\r\n", "me@x.test", ["a@y.test", "b@y.test"])
  );
  queue.add(undefined, undefined, undefined, Date.now() + 120_000); // not due (within back-off)
  const { factory, stats } = fakeTransport();
  const events: GatewayEvent[] = [];
  await withLoop(
    { queue, transportFactory: factory, events: { publish: (e) => events.push(e) } },
    async (loop) => {
      await within(loop.idle(), 5_000, "idle");
    },
  );
  assert.deepEqual(queue.sentIds.sort(), ids);
  assert.equal(queue.rows.size, 1, "the mail due later stays queued");
  assert.deepEqual(stats.mails[0].envelope, { from: "me@x.test", to: ["a@y.test", "b@y.test"] });
  assert.equal(
    new TextDecoder().decode(stats.mails[0].raw as Uint8Array),
    "Subject: s\r\n\r\nbody\r\n",
  );
  assert.deepEqual(events.map((e) => e.kind), ["SmtpConnected"]);
  assert.equal(stats.created, 1);
  assert.equal(stats.closed, 1, "stop() closes the transport");
});

Deno.test("SmtpLoop sends a mail once when a full disk keeps its outcome from the queue", async () => {
  const queue = new MemoryQueue();
  const accepted = queue.add();
  const deferred = queue.add("Subject: later\r\n\r\nx\r\n");
  let fullFor = 3; // the next writes fail, as on a full disk
  const full = <A extends unknown[]>(write: (...a: A) => void) => (...a: A) => {
    if (fullFor-- > 0) throw new DiskFullError("database or disk is full");
    write(...a);
  };
  queue.sent = full(queue.sent.bind(queue));
  queue.retry = full(queue.retry.bind(queue));
  const { factory, stats } = fakeTransport((mail) =>
    /later/.test(new TextDecoder().decode(mail.raw as Uint8Array))
      ? Promise.reject(smtpError("EENVELOPE", "RCPT TO", "451 4.3.0 Try again later"))
      : Promise.resolve()
  );
  await withLoop(
    { queue, transportFactory: factory, backoff: { min: 60_000, max: 60_000 } },
    async () => {
      await until(
        () => queue.sentIds.length === 1 && queue.retries.length === 1,
        5_000,
        "both outcomes recorded",
      );
    },
  );
  assert.deepEqual(queue.sentIds, [accepted]);
  assert.deepEqual(queue.retries.map((r) => r.id), [deferred]);
  const sends = (id: number) =>
    stats.mails.filter((m) =>
      /later/.test(new TextDecoder().decode(m.raw as Uint8Array)) === (id === deferred)
    )
      .length;
  assert.equal(sends(accepted), 1, "the accepted mail went out once");
  assert.equal(
    sends(deferred),
    1,
    "the deferred mail was not retried before its retry was written",
  );
});

for (
  const [name, err, answered] of [
    ["a 4xx answer", smtpError("EENVELOPE", "RCPT TO", "451 4.3.0 Try again later"), true],
    ["a network error", smtpError("ECONNECTION", "CONN"), false],
  ] as const
) {
  Deno.test(`SmtpLoop retries after ${name} with growing delays`, async () => {
    const { pass, ...clock } = testClocks();
    const queue = new MemoryQueue();
    queue.add();
    const { factory, stats } = fakeTransport(() => Promise.reject(err));
    const delays: number[] = [];
    await withLoop(
      { queue, transportFactory: factory, ...clock, maxAttempts: 3 },
      async (loop) => {
        for (let i = 0; i < 2; i++) {
          await within(loop.idle(), 5_000, "idle");
          assert.equal(queue.retries.length, i + 1);
          delays.push(queue.retries[i].nextTryAt - clock.now());
          assert.match(queue.retries[i].error, answered ? /451/ : /ECONNECTION/);
          pass(10_000);
          loop.wake();
        }
        await within(loop.idle(), 5_000, "idle");
      },
    );
    assert.ok(delays[0] >= 800 && delays[0] <= 1200, `first delay ${delays[0]}`);
    assert.ok(delays[1] > delays[0], `delays grow: ${delays}`);
    if (answered) {
      assert.equal(queue.gaveUps.length, 1, "the third 4xx gives up (maxAttempts 3)");
      assert.match(queue.gaveUps[0].error, /451.*3 attempts/);
    } else {
      assert.equal(queue.gaveUps.length, 0, "connection failures never give a mail up");
      assert.equal(queue.retries.length, 3);
      assert.equal(stats.created, 3, "a new transport after each connection failure");
      assert.equal(stats.closed, 3);
    }
  });
}

Deno.test("SmtpLoop: connection failures do not use up a mail's attempts", async () => {
  const { pass, ...clock } = testClocks();
  let answer: "down" | "451" = "down";
  const queue = new MemoryQueue();
  const id = queue.add();
  const { factory } = fakeTransport(() =>
    Promise.reject(
      answer === "down"
        ? smtpError("ECONNECTION", "CONN")
        : smtpError("EENVELOPE", "RCPT TO", "451 4.3.0 Try again later"),
    )
  );
  await withLoop(
    { queue, transportFactory: factory, ...clock, maxAttempts: 3 },
    async (loop) => {
      for (let i = 0; i < 5; i++) { // a long outage: more failures than maxAttempts
        await within(loop.idle(), 5_000, "idle");
        pass(600_000);
        loop.wake();
      }
      answer = "451";
      await within(loop.idle(), 5_000, "idle");
    },
  );
  const outage = queue.retries.filter((r) => /ECONNECTION/.test(r.error));
  assert.ok(outage.length >= 5, `${outage.length} connection failures, more than maxAttempts`);
  assert.equal(queue.gaveUps.length, 0, "the first 4xx after the outage does not give it up");
  assert.equal(queue.rows.get(id)?.attempts, 1);
  assert.match(queue.retries.at(-1)!.error, /451/);
});

Deno.test("SmtpLoop gives up on a 5xx answer to the mail but not on a 5xx to the login", async () => {
  const queue = new MemoryQueue();
  const refused = queue.add("Subject: refused\r\n\r\n");
  const login = queue.add("Subject: login\r\n\r\n");
  const { factory } = fakeTransport((mail) =>
    Promise.reject(
      new TextDecoder().decode(mail.raw as Uint8Array).includes("refused")
        ? smtpError("EMESSAGE", "DATA", "523 5.7.1 Encryption Needed: Invalid Unencrypted Mail")
        : smtpError("EAUTH", "AUTH PLAIN", "535 5.7.8 Error: authentication failed"),
    )
  );
  await withLoop(
    { queue, transportFactory: factory },
    (loop) => within(loop.idle(), 5_000, "idle"),
  );
  assert.deepEqual(queue.gaveUps.map((g) => g.id), [refused]);
  assert.match(queue.gaveUps[0].error, /523/);
  assert.deepEqual(queue.retries.map((r) => r.id), [login]);
});

Deno.test("SmtpLoop pauses after a connection failure and then probes with one mail", async () => {
  const { pass, ...clock } = testClocks();
  let up = false;
  const queue = new MemoryQueue();
  for (let i = 0; i < 10; i++) queue.add();
  const { factory, stats } = fakeTransport(() =>
    up ? Promise.resolve() : Promise.reject(smtpError("ECONNECTION", "CONN"))
  );
  await withLoop({ queue, transportFactory: factory, ...clock }, async (loop) => {
    await within(loop.idle(), 5_000, "idle");
    assert.equal(queue.retries.length, 4, "one round of 4 failed, then the loop pauses");
    pass(5_000);
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
    assert.equal(queue.retries.length, 5, "after the pause a single probe");
    up = true;
    pass(60_000);
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
  });
  assert.equal(queue.sentIds.length, 10);
  assert.equal(stats.maxInflight, 4);
});

Deno.test("SmtpLoop asks the relay's SIZE limit at start and again after each reconnect", async () => {
  const { pass, ...clock } = testClocks();
  let up = false;
  const limits: (number | undefined)[] = [];
  let probes = 0;
  const queue = new MemoryQueue();
  queue.add();
  const { factory, stats } = fakeTransport(() =>
    up ? Promise.resolve() : Promise.reject(smtpError("ECONNECTION", "CONN"))
  );
  await withLoop({
    queue,
    transportFactory: factory,
    ...clock,
    sizeProbe: () => Promise.resolve(++probes === 1 ? 31_457_280 : 1_000_000),
    onSizeLimit: (bytes) => void limits.push(bytes),
  }, async (loop) => {
    await within(loop.idle(), 5_000, "idle");
    await until(() => limits.length === 1, 5_000, "the first probe");
    up = true;
    pass(60_000);
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
    await until(() => limits.length === 2, 5_000, "the probe of the reconnect");
  });
  assert.equal(stats.created, 2, "a transport at start, another after the failure");
  assert.deepEqual(limits, [31_457_280, 1_000_000]);
  assert.equal(queue.sentIds.length, 1);
});

Deno.test("SmtpLoop sends a spooled mail as a stream of its file; a missing file gives it up", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const queue = new MemoryQueue();
    const path = `${dir}/0123456789abcdef0123456789abcdef.eml`;
    await Deno.writeTextFile(path, "Subject: spooled\r\n\r\nbig body\r\n");
    const spooled = queue.add("");
    queue.rows.set(spooled, { ...queue.rows.get(spooled)!, spoolPath: path });
    const missing = queue.add("");
    queue.rows.set(missing, { ...queue.rows.get(missing)!, spoolPath: `${dir}/gone.eml` });
    const bodies: string[] = [];
    const { factory, stats } = fakeTransport(async (mail) => {
      await delay(50); // a transport reads once it is connected: nothing may flow before
      const chunks: Uint8Array[] = [];
      for await (const c of mail.raw as AsyncIterable<Uint8Array>) chunks.push(c);
      bodies.push(new TextDecoder().decode(await new Blob(chunks as BlobPart[]).bytes()));
    });
    await withLoop(
      { queue, transportFactory: factory },
      (loop) => within(loop.idle(), 5_000, "idle"),
    );
    assert.deepEqual(queue.sentIds, [spooled]);
    assert.deepEqual(bodies, ["Subject: spooled\r\n\r\nbig body\r\n"]);
    assert.deepEqual(queue.gaveUps.map((g) => g.id), [missing]);
    assert.match(queue.gaveUps[0].error, /missing from the spool/);
    assert.equal(stats.mails.length, 1, "nothing was sent for the missing file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SmtpLoop: wake() sends a newly queued mail at once; stop() ends the sleep", async () => {
  const queue = new MemoryQueue();
  const { factory } = fakeTransport();
  await withLoop({ queue, transportFactory: factory }, async (loop) => {
    await within(loop.idle(), 5_000, "idle");
    const id = queue.add();
    loop.wake();
    await within(loop.idle(), 2_000, "the woken loop to send");
    assert.deepEqual(queue.sentIds, [id]);
    // The next mail is due in two minutes: the loop sleeps unless stop() ends the sleep.
    queue.add(undefined, undefined, undefined, Date.now() + 120_000);
    await within(loop.idle(), 5_000, "idle");
    await within(loop.stop(), 5_000, "stop() to end the hour-long sleep");
  });
});

Deno.test("SmtpLoop.stop() waits for the sends in flight and reports them", async () => {
  const queue = new MemoryQueue();
  const ids = [queue.add(), queue.add()];
  let started: () => void;
  const inFlight = new Promise<void>((r) => started = r);
  const { factory } = fakeTransport(async () => {
    started();
    await delay(200);
  });
  await withLoop({ queue, transportFactory: factory }, async (loop) => {
    await inFlight;
    await loop.stop();
    assert.deepEqual(queue.sentIds.sort(), ids);
  });
});

Deno.test("SmtpLoop pipelines sends: concurrency 4 keeps 4 in flight", async () => {
  const queue = new MemoryQueue();
  for (let i = 0; i < 8; i++) queue.add();
  const { factory, stats } = fakeTransport(() => delay(30));
  await withLoop(
    { queue, transportFactory: factory, concurrency: 4 },
    (loop) => within(loop.idle(), 5_000, "idle"),
  );
  assert.equal(queue.sentIds.length, 8);
  assert.equal(stats.maxInflight, 4);
});

// ---- clocks -----------------------------------------------------------------------------------

const DAY_MS = 86_400_000;
/** The right time in these tests (Unix ms, 2023-11-14). */
const RIGHT = 1_700_000_000_000;

/** rustls's words for a certificate outside its validity, as a nodemailer session error. */
function tlsClockError(words = "certificate expired"): Error {
  return smtpError(
    "ESOCKET",
    "CONN",
    undefined,
    `invalid peer certificate: ${words}: verification time 1769120000 (UNIX), but certificate ` +
      "is not valid after 1767225600 (1894400 seconds ago)",
  );
}

/** The reports a loop made to its problem sink, consecutive repeats folded. */
function problemLog() {
  const errors: (string | undefined)[] = [];
  const details: string[] = [];
  return {
    errors,
    details,
    sink: {
      report(_link: string, p: { error: string; detail: string } | undefined) {
        if (p) details.push(p.detail);
        if (errors.length === 0 || errors.at(-1) !== p?.error) errors.push(p?.error);
      },
    },
  };
}

Deno.test("SmtpLoop: a clock 800 days ahead, then corrected, sends right after the correction", async () => {
  const clock = testClocks(RIGHT + 800 * DAY_MS);
  let clockRight = false;
  const queue = new MemoryQueue();
  const id = queue.add();
  const problems = problemLog();
  // Seen from 800 days ahead the relay's certificate has expired.
  const { factory, stats } = fakeTransport(() =>
    clockRight ? Promise.resolve() : Promise.reject(tlsClockError())
  );
  await withLoop({
    queue,
    transportFactory: factory,
    now: clock.now,
    monotonic: clock.monotonic,
    problems: problems.sink,
    connectionBackoff: { min: 60_000, max: 60_000 },
  }, async (loop) => {
    await within(loop.idle(), 5_000, "idle");
    assert.equal(queue.retries.length, 1);
    assert.ok(queue.retries[0].nextTryAt > RIGHT + 800 * DAY_MS, "stored in the clock's future");
    assert.deepEqual(problems.errors, ["tls_clock"]);
    clock.pass(1_000);
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
    assert.equal(stats.mails.length, 1, "the pause runs on the monotonic clock: no new try yet");

    clockRight = true;
    clock.jump(-800 * DAY_MS); // NTP corrects the clock; the process keeps running
    loop.wake();
    await within(loop.idle(), 5_000, "the mail to be sent");
  });
  assert.deepEqual(queue.sentIds, [id], "sent after the correction, without a restart");
  assert.equal(stats.mails.length, 2, "one failed try, then the send");
  assert.equal(queue.gaveUps.length, 0);
  assert.deepEqual(problems.errors, ["tls_clock", undefined], "cleared by the send");
});

Deno.test("SmtpLoop: a clock jumping 400 days back does not stall sending", async () => {
  const clock = testClocks(RIGHT);
  let up = false;
  const queue = new MemoryQueue();
  const early = queue.add();
  const { factory } = fakeTransport(() =>
    up ? Promise.resolve() : Promise.reject(smtpError("ECONNECTION", "CONN"))
  );
  await withLoop(
    { queue, transportFactory: factory, now: clock.now, monotonic: clock.monotonic },
    async (loop) => {
      await within(loop.idle(), 5_000, "idle");
      assert.equal(queue.retries.length, 1, "the relay was down: retried after a pause");
      up = true;
      clock.jump(-400 * DAY_MS);
      clock.pass(2_000); // the pause (at most 1.2 s) is over on the monotonic clock
      const late = queue.add(); // queued at the new, earlier time
      loop.wake();
      await within(loop.idle(), 5_000, "idle");
      assert.deepEqual(queue.sentIds.sort(), [early, late]);
    },
  );
  assert.equal(queue.retries.length, 1);
  assert.ok(queue.pullBacks.at(-1)! >= 1, "the row timed before the jump was pulled back");
});

Deno.test("SmtpLoop: pauses are measured on the monotonic clock, not the wall clock", async () => {
  const clock = testClocks(RIGHT);
  let up = false;
  const queue = new MemoryQueue();
  queue.add();
  const { factory, stats } = fakeTransport(() =>
    up ? Promise.resolve() : Promise.reject(smtpError("ECONNECTION", "CONN"))
  );
  await withLoop({
    queue,
    transportFactory: factory,
    now: clock.now,
    monotonic: clock.monotonic,
    connectionBackoff: { min: 10_000, max: 10_000 },
  }, async (loop) => {
    await within(loop.idle(), 5_000, "idle");
    up = true;
    clock.jump(4_000); // the wall clock moves, but by less than a jump
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
    assert.equal(stats.mails.length, 1, "still pausing");
    clock.pass(13_000); // longer than the pause with its jitter
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
  });
  assert.equal(stats.mails.length, 2);
  assert.equal(queue.sentIds.length, 1);
});

Deno.test("SmtpLoop pulls back at start what a clock ahead left queued, not what is due soon", async () => {
  const clock = testClocks(RIGHT);
  const queue = new MemoryQueue();
  const far = queue.add(undefined, undefined, undefined, RIGHT + 800 * DAY_MS);
  const soon = queue.add(undefined, undefined, undefined, RIGHT + 120_000);
  const { factory } = fakeTransport();
  await withLoop(
    { queue, transportFactory: factory, now: clock.now, monotonic: clock.monotonic },
    async (loop) => {
      await within(loop.idle(), 5_000, "idle");
      assert.deepEqual(queue.sentIds, [far], "sent at once after the start");
      assert.deepEqual(queue.pullBacks, [1]);
      clock.pass(1_000);
      loop.wake();
      await within(loop.idle(), 5_000, "idle");
      assert.deepEqual(queue.pullBacks, [1], "no jump: the times are not checked again");
    },
  );
  assert.equal(queue.rows.get(soon)?.nextTryAt, RIGHT + 120_000, "a back-off in range stays");
});

Deno.test("SmtpLoop reports a TLS clock failure once in the log, retries it and clears it", async () => {
  const clock = testClocks(RIGHT);
  let failures = 3;
  const queue = new MemoryQueue();
  const id = queue.add();
  const problems = problemLog();
  const { factory } = fakeTransport(() =>
    failures-- > 0 ? Promise.reject(tlsClockError("certificate not valid yet")) : Promise.resolve()
  );
  const lines: string[] = [];
  await withLoop({
    queue,
    transportFactory: factory,
    now: clock.now,
    monotonic: clock.monotonic,
    problems: problems.sink,
    maxAttempts: 2,
  }, async (loop) => {
    const prev = setLogSink((l) => lines.push(l));
    try {
      for (let i = 0; i < 4; i++) {
        await within(loop.idle(), 5_000, "idle");
        clock.pass(60_000);
        loop.wake();
      }
      await within(loop.idle(), 5_000, "idle");
    } finally {
      setLogSink(prev);
    }
  });
  assert.deepEqual(queue.sentIds, [id]);
  assert.equal(queue.retries.length, 3, "retried with back-off");
  assert.equal(queue.gaveUps.length, 0, "a clock failure never uses up a mail's attempts");
  assert.deepEqual(problems.errors, ["tls_clock", undefined]);
  assert.match(
    problems.details[0],
    /^the relay's TLS certificate is not yet valid at this device's clock \(2023-11-14T.*Z\): check the system clock$/,
  );
  const warns = lines.filter((l) => / WARN .*at this device's clock/.test(l));
  assert.equal(warns.length, 1, "one WARN naming the clock");
});

Deno.test("SmtpLoop asks rustls about a certificate node:tls could not verify", async () => {
  const clock = testClocks(RIGHT);
  const queue = new MemoryQueue();
  queue.add();
  const problems = problemLog();
  let probes = 0;
  let answer: "expired" | undefined = "expired";
  const unverified = () =>
    smtpError("ESOCKET", "CONN", undefined, "unable to verify the first certificate");
  const { factory } = fakeTransport(() => Promise.reject(unverified()));
  await withLoop({
    queue,
    transportFactory: factory,
    now: clock.now,
    monotonic: clock.monotonic,
    problems: problems.sink,
    tlsProbe: () => (probes++, Promise.resolve(answer)),
  }, async (loop) => {
    await within(loop.idle(), 5_000, "idle");
    await until(() => problems.errors.length === 1, 2_000, "the probe's answer");
    answer = undefined; // e.g. the certificate's issuer is not trusted
    clock.pass(60_000);
    loop.wake();
    await within(loop.idle(), 5_000, "idle");
    await until(() => problems.errors.length === 2, 2_000, "the probe's answer");
  });
  assert.equal(probes, 2, "one probe per failed connection");
  assert.deepEqual(problems.errors, ["tls_clock", undefined]);
  assert.match(problems.details[0], /expired at this device's clock/);
});

// ---- against a relay ------------------------------------------------------------------------

function plainMail(from: string, to: string, n: number): string {
  return [
    `From: <${from}>`,
    `To: <${to}>`,
    `Subject: outbox ${n}`,
    `Message-ID: <smtp-loop-${n}@_relay.test>`,
    `Date: ${new Date().toUTCString()}`,
    "",
    `mail number ${n}`,
    "",
  ].join("\r\n");
}

function loopFor(relay: Relay, sender: RelayAccount, queue: OutboxQueue): SmtpLoop {
  const endpoint = {
    host: relay.host,
    port: relay.smtpsPort,
    security: "ssl" as const,
    user: sender.email,
  };
  return new SmtpLoop({
    endpoint,
    password: sender.password,
    queue,
    backoff: { min: 100, max: 1_000 },
    connectionBackoff: { min: 100, max: 500 },
  });
}

/** Message-IDs in the INBOX of `acc`, once there are at least `count` messages (or after 30 s). */
async function inboxIds(relay: Relay, acc: RelayAccount, count: number): Promise<string[]> {
  const imap = {
    host: relay.host,
    port: relay.imapsPort,
    security: "ssl" as const,
    user: acc.email,
  };
  const client = createImapClient(imap, acc.password);
  client.on("error", () => {});
  await client.connect();
  try {
    await until(
      async () => ((await client.status("INBOX", { messages: true })) || {}).messages! >= count,
      30_000,
      "mail",
    );
    await client.mailboxOpen("INBOX");
    const ids: string[] = [];
    for await (const msg of client.fetch("1:*", { envelope: true })) {
      ids.push(msg.envelope?.messageId ?? "");
    }
    return ids;
  } finally {
    await client.logout().catch(() => client.close());
  }
}

Deno.test({
  name: "SmtpLoop delivers through a relay and loses nothing, duplicates nothing across an outage",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const [sender, recipient] = [await relay.register(), await relay.register()];
    const queue = new MemoryQueue();
    const add = (n: number) =>
      queue.add(plainMail(sender.email, recipient.email, n), sender.email, [recipient.email]);
    for (let n = 1; n <= 20; n++) add(n);
    const loop = loopFor(relay, sender, queue);
    const ac = new AbortController();
    loop.start(ac.signal);
    try {
      await until(() => queue.sentIds.length === 20, 30_000, "the first 20 mails");
      assert.equal(new Set(await inboxIds(relay, recipient, 20)).size, 20);

      await relay.stopMail();
      for (let n = 21; n <= 40; n++) add(n);
      loop.wake();
      await until(
        () => queue.retries.length >= 8,
        20_000,
        "failed attempts while the relay is down",
      );
      assert.equal(queue.sentIds.length, 20, "nothing sent while the relay is down");
      await relay.startMail();
      await until(() => queue.rows.size === 0, 60_000, "the queue to drain after the outage");
    } finally {
      ac.abort();
      await loop.stop();
    }
    assert.equal(queue.gaveUps.length, 0);
    assert.equal(queue.sentIds.length, 40);
    await delay(1_000); // a late duplicate would show up by now
    const ids = await inboxIds(relay, recipient, 40);
    assert.equal(ids.length, 40, "each mail arrived exactly once");
    assert.equal(new Set(ids).size, 40);
  },
});

Deno.test({
  name: "SmtpLoop gives up on a plain mail that a filtering relay refuses with 523",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: true });
    const [sender, recipient] = [await relay.register(), await relay.register()];
    const queue = new MemoryQueue();
    queue.add(plainMail(sender.email, recipient.email, 1), sender.email, [recipient.email]);
    const loop = loopFor(relay, sender, queue);
    const ac = new AbortController();
    loop.start(ac.signal);
    try {
      await until(() => queue.rows.size === 0, 30_000, "the mail to be refused");
    } finally {
      ac.abort();
      await loop.stop();
    }
    assert.deepEqual(queue.sentIds, []);
    assert.equal(queue.gaveUps.length, 1);
    assert.match(queue.gaveUps[0].error, /523/);
  },
});
