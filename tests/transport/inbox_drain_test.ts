/**
 * The INBOX drain through ImapLoop against the real relay: a batch whose transfer takes far
 * longer than the heartbeat timeout (a throttled link) drains on one connection, one mail at a
 * time; processing that outlasts the heartbeat keeps the connection with NOOPs; a mail that keeps
 * failing is quarantined whole after `maxAttempts` and only then deleted, the rest are delivered;
 * a mail above `maxMailBytes` is recorded from its head without being fetched whole.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Connectivity } from "../../src/constants.ts";
import { setLogLevel, setLogSink } from "../../src/log.ts";
import { createImapClient } from "../../src/transport/imap_client.ts";
import { ImapLoop } from "../../src/transport/imap_loop.ts";
import {
  DEFAULT_DRAIN_LIMITS,
  type DrainLimits,
  GIVE_UP_HEAD_BYTES,
  type MailSpool,
} from "../../src/transport/inbox_drain.ts";
import type { Endpoint } from "../../src/transport/server_params.ts";
import { randomBytes } from "../_helpers/huge_mail.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { throttleProxy } from "../_helpers/throttle_proxy.ts";
import { MemorySink, sourceBytes } from "./_memory_sink.ts";
import type { MailSource } from "../../src/mime/mail_source.ts";

/** A plain mail with `subject` and about `bytes` of base64 filler. */
function mail(to: string, subject: string, bytes = 0): Uint8Array {
  const filler = Buffer.from(randomBytes(Math.floor(bytes * 0.74))).toString("base64")
    .replace(/.{76}/g, "$&\r\n");
  return new TextEncoder().encode(
    [
      `From: <${to}>`,
      `To: <${to}>`,
      `Subject: ${subject}`,
      `Message-ID: <${crypto.randomUUID()}@test.invalid>`,
      "",
      filler,
      "",
    ].join("\r\n"),
  );
}

/** An account on `relay` with `mails` put into its INBOX in one MOVE (all visible at once). */
async function inboxWith(relay: Relay, mails: (to: string) => Uint8Array[]) {
  const acc = await relay.register();
  const endpoint: Endpoint = {
    host: relay.host,
    port: relay.imapsPort,
    security: "ssl",
    user: acc.email,
  };
  const imap = createImapClient(endpoint, acc.password);
  imap.on("error", () => {});
  await imap.connect();
  await imap.mailboxCreate("Staging");
  for (const raw of mails(acc.email)) assert.ok(await imap.append("Staging", Buffer.from(raw)));
  await imap.mailboxOpen("Staging");
  await imap.messageMove("1:*", "INBOX");
  const inboxCount = async () => {
    const st = await imap.status("INBOX", { messages: true });
    return st === false ? -1 : st.messages ?? -1;
  };
  return {
    acc,
    endpoint,
    inboxCount,
    close: () => imap.logout().catch(() => imap.close()),
  };
}

/** Runs an ImapLoop on `endpoint` into `sink` until `done()` holds; returns connectivity levels. */
async function runLoop(
  endpoint: Endpoint,
  password: string,
  sink: MemorySink,
  done: () => boolean,
  o: { limits?: Partial<DrainLimits>; heartbeatMs?: number; heartbeatTimeoutMs?: number } = {},
): Promise<number[]> {
  const levels: number[] = [];
  const loop = new ImapLoop({
    params: { imap: endpoint, smtp: endpoint },
    password,
    connectivity: { set: (l) => levels.push(l) },
    events: { publish: () => {} },
    reception: sink,
    drainLimits: { ...DEFAULT_DRAIN_LIMITS, ...o.limits },
    ...(o.heartbeatMs === undefined ? {} : { heartbeatMs: o.heartbeatMs }),
    ...(o.heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs: o.heartbeatTimeoutMs }),
    backoff: { min: 50, max: 200 },
  });
  const stop = new AbortController();
  loop.start(stop.signal);
  try {
    await sink.until(done, 60_000);
    await new Promise((r) => setTimeout(r, 300)); // let the last delete land
  } finally {
    stop.abort();
    await loop.stop();
  }
  return levels;
}

Deno.test({
  name: "a batch slower than the heartbeat timeout drains on one connection, each mail once",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const subjects = ["m1", "m2", "m3", "m4", "m5", "m6"];
    const box = await inboxWith(relay, (to) => subjects.map((s) => mail(to, s, 400_000)));
    // 2.4 MB at 1 MB/s: fetching the batch at once took 2.4 s, eight heartbeat timeouts.
    await using proxy = throttleProxy(relay.imapsPort, 1_000_000);
    try {
      const sink = new MemorySink();
      const levels = await runLoop(
        { ...box.endpoint, port: proxy.port },
        box.acc.password,
        sink,
        () => sink.delivered.length >= subjects.length,
        { heartbeatMs: 300, heartbeatTimeoutMs: 300 },
      );
      assert.deepEqual(sink.delivered, subjects, "each mail delivered once, in order");
      assert.equal(
        levels.filter((l) => l === Connectivity.CONNECTED).length,
        1,
        `one connection throughout (levels ${levels.join(",")})`,
      );
      assert.equal(await box.inboxCount(), 0, "INBOX ends empty");
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "processing that outlasts the heartbeat keeps the connection (NOOPs while it runs)",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const box = await inboxWith(relay, (to) => ["slow", "next"].map((s) => mail(to, s)));
    try {
      const sink = new MemorySink();
      const deliver = sink.deliver.bind(sink);
      const lines: string[] = [];
      // Processing "slow" takes eight heartbeat intervals.
      sink.deliver = async (raw: MailSource) => {
        if (new TextDecoder().decode(sourceBytes(raw)).includes("Subject: slow")) {
          await new Promise((r) => setTimeout(r, 1_600));
        }
        return deliver(raw);
      };
      const prev = setLogSink((l) => lines.push(l));
      setLogLevel("debug");
      let levels: number[];
      try {
        levels = await runLoop(
          box.endpoint,
          box.acc.password,
          sink,
          () => sink.delivered.length >= 2,
          { heartbeatMs: 200, heartbeatTimeoutMs: 200 },
        );
      } finally {
        setLogLevel("info");
        setLogSink(prev);
      }
      const noops = lines.filter((l) => l.includes("keep-alive NOOP answered")).length;
      assert.deepEqual(sink.delivered, ["slow", "next"]);
      assert.equal(levels.filter((l) => l === Connectivity.CONNECTED).length, 1);
      assert.ok(noops >= 3, `${noops} NOOPs`);
      assert.equal(await box.inboxCount(), 0);
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "a mail that keeps failing is quarantined whole after maxAttempts; the others arrive",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const box = await inboxWith(relay, (to) => ["a", "poison", "b"].map((s) => mail(to, s)));
    try {
      const sink = new MemorySink((s) => s === "poison");
      await runLoop(
        box.endpoint,
        box.acc.password,
        sink,
        () => sink.quarantined.length > 0 && sink.delivered.length >= 2,
        { limits: { maxAttempts: 3, retryBaseMs: 20 }, heartbeatMs: 100 },
      );
      assert.deepEqual(sink.delivered, ["a", "b"]);
      assert.deepEqual(sink.tried.filter((s) => s === "poison").length, 3, "three attempts");
      assert.equal(sink.givenUp.length, 0, "nothing is dropped unread");
      assert.equal(sink.quarantined.length, 1);
      assert.equal(sink.quarantined[0].subject, "poison");
      assert.match(sink.quarantined[0].reason, /failed 3 times: cannot parse poison/);
      assert.equal(await box.inboxCount(), 0, "deleted from the server once kept");
    } finally {
      await box.close();
    }
  },
});

/**
 * INBOX with "crasher" then "next", the crasher already begun `begun` times by earlier runs that
 * never finished it; runs the loop (maxAttempts 3) until `done(sink)`.
 */
async function drainAfterCrashes(begun: number, done: (sink: MemorySink) => boolean) {
  await using relay = await startRelay({ filter: false });
  const box = await inboxWith(relay, (to) => ["crasher", "next"].map((s) => mail(to, s)));
  try {
    const sink = new MemorySink();
    const check = createImapClient(box.endpoint, box.acc.password);
    check.on("error", () => {});
    await check.connect();
    const inbox = await check.mailboxOpen("INBOX");
    const first = await check.fetchOne("1", { uid: true });
    await check.logout();
    assert.ok(first);
    sink.attempts.set(`${inbox.uidValidity}:${first.uid}`, begun);
    await runLoop(box.endpoint, box.acc.password, sink, () => done(sink), {
      limits: { maxAttempts: 3 },
    });
    return { sink, left: await box.inboxCount() };
  } finally {
    await box.close();
  }
}

Deno.test({
  name: "a mail counted at maxAttempts already (it killed the process) is quarantined unread",
  ignore: NO_RELAY,
  async fn() {
    const { sink, left } = await drainAfterCrashes(
      3,
      (s) => s.quarantined.length > 0 && s.delivered.length >= 1,
    );
    assert.deepEqual(sink.tried, ["next"], "the crasher is not processed again");
    assert.equal(sink.quarantined[0].subject, "crasher");
    assert.ok(sink.quarantined[0].bytes > 100, "kept whole");
    assert.match(sink.quarantined[0].reason, /not processed after 3 attempts/);
    assert.equal(left, 0);
  },
});

Deno.test({
  name: "a mail that stopped the process even while fetched for the quarantine keeps its head",
  ignore: NO_RELAY,
  async fn() {
    // Begun once more than maxAttempts: the quarantine's own fetch was one of them.
    const { sink, left } = await drainAfterCrashes(
      4,
      (s) => s.givenUp.length > 0 && s.delivered.length >= 1,
    );
    assert.deepEqual(sink.tried, ["next"]);
    assert.equal(sink.quarantined.length, 0);
    assert.equal(sink.givenUp[0].subject, "crasher");
    assert.match(sink.givenUp[0].reason, /not processed after 4 attempts/);
    assert.equal(left, 0);
  },
});

Deno.test({
  name: "a mail above maxMailBytes is recorded from its head, never handed to reception",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const box = await inboxWith(relay, (to) => [mail(to, "big", 600_000), mail(to, "small")]);
    try {
      const sink = new MemorySink();
      await runLoop(
        box.endpoint,
        box.acc.password,
        sink,
        () => sink.givenUp.length > 0 && sink.delivered.length >= 1,
        { limits: { maxMailBytes: 500_000 } },
      );
      assert.deepEqual(sink.tried, ["small"]);
      const big = sink.givenUp[0];
      assert.equal(big.subject, "big");
      assert.match(big.reason, /larger than 500000 bytes/);
      assert.ok(big.size > 500_000, `size ${big.size}`);
      assert.equal(big.headBytes, GIVE_UP_HEAD_BYTES, "only the head was fetched");
      assert.equal(await box.inboxCount(), 0);
    } finally {
      await box.close();
    }
  },
});

/** A MemorySink with a spool in `dir`: it records how each mail came (memory or a file). */
class SpoolSink extends MemorySink {
  readonly kinds: string[] = [];
  readonly bytes: Uint8Array[] = [];
  readonly spool: MailSpool;
  constructor(dir: string, maxMailBytes: number, fail: (subject: string) => boolean = () => false) {
    super(fail);
    this.spool = { dir, maxMailBytes: () => maxMailBytes };
  }
  override deliver(raw: MailSource): Promise<void> {
    this.kinds.push(raw.kind);
    this.bytes.push(sourceBytes(raw));
    return super.deliver(raw);
  }
}

Deno.test({
  name: "a mail above inMemoryMailBytes arrives as a file, fetched in ranges, removed after",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const mails: Uint8Array[] = [];
    const box = await inboxWith(relay, (to) => {
      mails.push(mail(to, "big", 300_000), mail(to, "small", 1000), mail(to, "huge", 700_000));
      return mails;
    });
    try {
      await withTempDir(async (dir) => {
        const sink = new SpoolSink(dir, 600_000);
        await runLoop(
          box.endpoint,
          box.acc.password,
          sink,
          () => sink.delivered.length >= 2 && sink.givenUp.length > 0,
          { limits: { inMemoryMailBytes: 100_000, fetchChunkBytes: 64 * 1024 } },
        );
        assert.deepEqual(sink.delivered, ["big", "small"]);
        assert.deepEqual(sink.kinds, ["file", "bytes"]);
        // The relay stores what it was given with CRLF: the fetched bytes are the appended mail.
        assert.deepEqual(sink.bytes[0], mails[0]);
        assert.deepEqual(sink.bytes[1], mails[1]);
        assert.match(sink.givenUp[0].reason, /larger than 600000 bytes/, "the spool's cap applies");
        assert.deepEqual([...Deno.readDirSync(dir)], [], "no temp file left");
        assert.equal(await box.inboxCount(), 0);
      });
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "a spooled mail that keeps failing is quarantined whole, or from its head above the bound",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const box = await inboxWith(
      relay,
      (to) => [mail(to, "bad", 200_000), mail(to, "worse", 500_000)],
    );
    try {
      await withTempDir(async (dir) => {
        const sink = new SpoolSink(dir, 10_000_000, () => true);
        await runLoop(
          box.endpoint,
          box.acc.password,
          sink,
          () => sink.quarantined.length + sink.givenUp.length >= 2,
          {
            limits: {
              inMemoryMailBytes: 100_000,
              quarantineMaxBytes: 300_000,
              maxAttempts: 2,
              retryBaseMs: 20,
            },
            heartbeatMs: 100,
          },
        );
        assert.deepEqual(sink.kinds, ["file", "file", "file", "file"]);
        assert.equal(sink.quarantined[0].subject, "bad");
        assert.ok(sink.quarantined[0].bytes > 200_000, "kept whole");
        assert.equal(sink.givenUp[0].subject, "worse");
        assert.match(sink.givenUp[0].reason, /failed 2 times.*not kept whole/);
        assert.equal(sink.givenUp[0].headBytes, GIVE_UP_HEAD_BYTES);
        assert.deepEqual([...Deno.readDirSync(dir)], [], "no temp file left");
        assert.equal(await box.inboxCount(), 0);
      });
    } finally {
      await box.close();
    }
  },
});
