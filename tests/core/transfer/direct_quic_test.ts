/**
 * The QUIC strategy between two real in-memory accounts with real endpoints on loopback (mails
 * handed over by the test): the file over the direct path with no part, a receiver whose path is
 * off declining at once, a connection that never comes up giving the transfer to relay parts, and
 * a forged offer declined.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { DirectEndpoint, TransferOptions } from "../../../src/core/transfer/mod.ts";
import type { ReceiveOutcome } from "../../../src/core/receive/pipeline.ts";
import { ConfigKey } from "../../../src/store/mod.ts";
import {
  P2pEndpoint,
  type P2pEndpointOptions,
  type P2pOffer,
} from "../../../src/transport/p2p/mod.ts";
import { ACTIVE_LICENSE, deliver, introduce, type TestAccount, testAccount } from "../_accounts.ts";
import { attach } from "../_messaging.ts";
import { makeTempDir } from "../../_helpers/temp.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const SIZE = 300_000;
/** Direct from 64 KiB here (1 MiB in the daemon), parts of a 64 KiB relay limit. */
const OPTIONS: Partial<TransferOptions> = { directMinBytes: 64 * 1024, directAnswerMs: 20_000 };

interface Setup {
  a: TestAccount;
  b: TestAccount;
  chatId: number;
  bytes: Uint8Array;
  path: string;
  endpoints: P2pEndpoint[];
}

async function setup(
  dir: string,
  ep: { a?: P2pEndpointOptions; b?: P2pEndpointOptions | null } = {},
  options: Partial<TransferOptions> = OPTIONS,
  /** Wraps A's endpoint (what A's strategy offers through). */
  wrapA: (e: P2pEndpoint) => DirectEndpoint = (e) => e,
): Promise<Setup> {
  const endpoints: P2pEndpoint[] = [];
  const open = async (o: P2pEndpointOptions | null | undefined) => {
    if (o === null) return undefined;
    const e = await P2pEndpoint.open({ hostname: "127.0.0.1", connectTimeoutMs: 5_000, ...o });
    endpoints.push(e);
    return e;
  };
  const a = await testAccount(
    "a@x.test",
    "A",
    `${dir}/a`,
    0,
    undefined,
    ACTIVE_LICENSE,
    options,
    await open(ep.a).then((e) => e && wrapA(e)),
  );
  const b = await testAccount(
    "b@x.test",
    "B",
    `${dir}/b`,
    0,
    undefined,
    ACTIVE_LICENSE,
    options,
    await open(ep.b),
  );
  const { bOnA } = introduce(a, b);
  a.store.contacts.setLargeFiles(b.self.fingerprint, true);
  a.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(64 * 1024));
  const whole = new Uint8Array(SIZE);
  for (let i = 0; i < SIZE; i += 65_536) crypto.getRandomValues(whole.subarray(i, i + 65_536));
  await Deno.mkdir(`${dir}/files`, { recursive: true });
  const path = `${dir}/files/big.bin`;
  await Deno.writeFile(path, whole);
  return { a, b, chatId: a.chats.getOrCreate1to1(bOnA).chatId, bytes: whole, path, endpoints };
}

async function send(s: Setup): Promise<number> {
  await using file = await attach(s.path);
  return await s.a.sendMessage({ chatId: s.chatId, text: "big", file: { source: file } });
}

function kinds(acc: TestAccount, kind: string): Record<string, unknown>[] {
  return acc.sink.events.filter((e) => e.kind === kind) as unknown as Record<string, unknown>[];
}

/** Pumps and hands mails both ways until `done` holds (the direct runs go on meanwhile). */
async function exchangeUntil(s: Setup, done: () => boolean): Promise<void> {
  for (let round = 0; round < 400 && !done(); round++) {
    await s.a.transfers.sweep();
    await s.b.transfers.sweep();
    await deliver(s.a, s.b);
    await deliver(s.b, s.a);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(done(), "the transfer ended");
}

async function received(s: Setup): Promise<Uint8Array> {
  const inc = kinds(s.b, "IncomingMsg");
  assert.equal(inc.length, 1, "one message");
  const msg = s.b.store.msgs.get(inc[0].msgId as number)!;
  return await Deno.readFile(`${s.b.ctx.blobDir}/${msg.file}`);
}

function close(s: Setup): void {
  for (const e of s.endpoints) e.close();
  s.a.store.close();
  s.b.store.close();
}

Deno.test({
  name: "the file travels over the direct path: identical, shown once, no part, path direct",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("direct");
    const s = await setup(tmp.path, { a: {}, b: {} });
    try {
      const msgId = await send(s);
      await exchangeUntil(s, () => kinds(s.a, "TransferDone").length > 0);
      assert.equal(sha(await received(s)), sha(s.bytes));
      const out = s.a.store.transfers.byMessage(msgId)!;
      assert.deepEqual([out.state, out.nextPart, out.resend.length], ["done", 0, 0]);
      for (const acc of [s.a, s.b]) {
        assert.deepEqual(kinds(acc, "TransferDone").map((e) => e.path), ["direct"]);
        assert.ok(kinds(acc, "TransferProgress").every((e) => e.path === "direct"));
      }
    } finally {
      close(s);
    }
  },
});

Deno.test({
  name: "a receiver whose direct path is off declines the offer; relay parts carry the file",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("direct");
    const s = await setup(tmp.path, { a: {}, b: null });
    try {
      const msgId = await send(s);
      await s.a.transfers.pump(); // the offer goes out; no part yet
      assert.equal(s.a.store.transfers.byMessage(msgId)!.nextPart, 0);
      await exchangeUntil(s, () => kinds(s.a, "TransferDone").length > 0);
      assert.equal(sha(await received(s)), sha(s.bytes));
      assert.deepEqual(kinds(s.b, "TransferDone").map((e) => e.path), ["relay"]);
      assert.ok(s.a.store.transfers.byMessage(msgId)!.nextPart > 0, "parts went out");
    } finally {
      close(s);
    }
  },
});

Deno.test({
  name: "no connection within the bound: relay parts carry the whole file, shown once",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("direct");
    // Each side advertises a port nobody listens on: every dial fails, both runs time out.
    const nowhere = [{ hostname: "127.0.0.1", port: 9 }];
    const s = await setup(tmp.path, {
      a: { advertise: nowhere, connectTimeoutMs: 1_000 },
      b: { advertise: nowhere, connectTimeoutMs: 1_000 },
    });
    try {
      await send(s);
      await exchangeUntil(s, () => kinds(s.a, "TransferDone").length > 0);
      assert.equal(sha(await received(s)), sha(s.bytes));
      assert.deepEqual(kinds(s.b, "TransferDone").map((e) => e.path), ["relay"]);
      assert.equal(kinds(s.b, "TransferFailed").length, 0);
    } finally {
      close(s);
    }
  },
});

/** A's endpoint with every offer it makes rewritten by `forge` before it is mailed. */
function forging(forge: (o: P2pOffer) => P2pOffer): (e: P2pEndpoint) => DirectEndpoint {
  return (e) => ({
    offer: async (req) => {
      const out = await e.offer(req);
      return {
        offer: forge(out.offer),
        run: (answer, opts) => out.run(answer, opts),
        cancel: () => out.cancel(),
      };
    },
    accept: (offer, sink) => e.accept(offer, sink),
  });
}

for (
  const [what, forge] of [
    ["size", (o: P2pOffer) => ({ ...o, size: o.size + 1 })],
    ["SHA-256", (o: P2pOffer) => ({ ...o, sha256: "0".repeat(64) })],
  ] as const
) {
  Deno.test({
    name: `an offer whose ${what} differs from the announcement is declined; relay parts finish`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      await using tmp = await makeTempDir("direct");
      const s = await setup(tmp.path, { a: {}, b: {} }, OPTIONS, forging(forge));
      // What B's reception made of each mail from A.
      const outcomes: ReceiveOutcome[] = [];
      const receive = s.b.receiver.receive.bind(s.b.receiver);
      s.b.receiver.receive = async (raw) => {
        const o = await receive(raw);
        outcomes.push(o);
        return o;
      };
      try {
        const msgId = await send(s);
        await exchangeUntil(s, () => kinds(s.a, "TransferDone").length > 0);
        const direct = outcomes.filter((o) => o.kind === "transfer" && /direct/.test(o.what));
        assert.deepEqual(direct, [{
          kind: "transfer",
          what: "direct offer declined: forged_offer",
        }]);
        assert.equal(sha(await received(s)), sha(s.bytes));
        const out = s.a.store.transfers.byMessage(msgId)!;
        assert.deepEqual([out.state, out.path], ["done", "relay"]);
        assert.equal(out.nextPart, out.parts, "every part went out");
        for (const acc of [s.a, s.b]) {
          assert.deepEqual(kinds(acc, "TransferDone").map((e) => e.path), ["relay"]);
          assert.equal(kinds(acc, "TransferFailed").length, 0);
        }
      } finally {
        close(s);
      }
    },
  });
}

Deno.test({
  name: "a file below 1 MiB is never offered: relay parts at once",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("direct");
    const s = await setup(tmp.path, { a: {}, b: {} }, { directAnswerMs: 20_000 });
    try {
      const msgId = await send(s);
      await s.a.transfers.pump();
      // Parts queued on the first pass: no offer was waited for.
      assert.ok(s.a.store.transfers.byMessage(msgId)!.nextPart > 0, "parts queued at once");
      await exchangeUntil(s, () => kinds(s.a, "TransferDone").length > 0);
      assert.deepEqual(kinds(s.b, "TransferDone").map((e) => e.path), ["relay"]);
    } finally {
      close(s);
    }
  },
});
