/**
 * The transfer manager between two real in-memory accounts (real keys, real pipeline, mails
 * handed over by the test, an injected clock): parts, a part lost and asked for again after the
 * quiet time (not before), one message only, confirmation, cancel, and the capability rule.
 */
import assert from "node:assert/strict";
import { GatewayError } from "../../../src/errors.ts";
import { createHash } from "node:crypto";
import { ConfigKey } from "../../../src/store/mod.ts";
import { RELAY_HEADER_ROOM_BYTES } from "../../../src/core/send/mod.ts";
import { Header } from "../../../src/protocol.ts";
import { DEFAULT_TRANSFER_OPTIONS, type TransferOptions } from "../../../src/core/transfer/mod.ts";
import {
  ACTIVE_LICENSE,
  deliver,
  introduce,
  mailBytes,
  type TestAccount,
  testAccount,
} from "../_accounts.ts";
import { attach } from "../_messaging.ts";
import { makeTempDir } from "../../_helpers/temp.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

interface Setup {
  a: TestAccount;
  b: TestAccount;
  chatId: number;
  clock: { now: number };
  bytes: Uint8Array;
  path: string;
}

async function setup(
  dir: string,
  capable = true,
  bOptions?: Partial<TransferOptions>,
): Promise<Setup> {
  const clock = { now: Date.UTC(2026, 0, 2) };
  const a = await testAccount("a@x.test", "A", `${dir}/a`, 0, () => clock.now);
  const b = await testAccount(
    "b@x.test",
    "B",
    `${dir}/b`,
    0,
    () => clock.now,
    ACTIVE_LICENSE,
    bOptions,
  );
  const { bOnA } = introduce(a, b);
  if (capable) a.store.contacts.setLargeFiles(b.self.fingerprint, true);
  a.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(64 * 1024));
  const bytes = new Uint8Array(100_000);
  for (let i = 0; i < bytes.length; i += 50_000) {
    crypto.getRandomValues(bytes.subarray(i, i + 50_000));
  }
  await Deno.mkdir(`${dir}/files`, { recursive: true });
  const path = `${dir}/files/big.bin`;
  await Deno.writeFile(path, bytes);
  return { a, b, chatId: a.chats.getOrCreate1to1(bOnA).chatId, clock, bytes, path };
}

async function send(s: Setup): Promise<number> {
  await using file = await attach(s.path);
  return await s.a.sendMessage({ chatId: s.chatId, text: "big", file: { source: file } });
}

/** Pumps and hands mails both ways until nothing moves (`drop` filters A's mails first). */
async function exchange(s: Setup, drop: (raw: string) => boolean = () => false): Promise<void> {
  for (let round = 0; round < 50; round++) {
    await s.a.transfers.pump();
    for (const row of s.a.store.outbox.due(Number.MAX_SAFE_INTEGER)) {
      if (drop(row.rfc724Mid)) s.a.store.outbox.remove(row.id);
    }
    const moved = (await deliver(s.a, s.b)).length + (await deliver(s.b, s.a)).length;
    if (moved === 0 && s.a.store.outbox.count() === 0) return;
  }
}

function kinds(acc: TestAccount, kind: string) {
  return acc.sink.events.filter((e) => e.kind === kind);
}

Deno.test("a file above the limit goes as parts; the message shows once with the same bytes", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  const msgId = await send(s);
  const t = s.a.store.transfers.byMessage(msgId)!;
  assert.equal(t.direction, "out");
  assert.equal(t.parts, Math.ceil(100_000 / t.partSize));
  assert.ok(t.parts > 2);
  // The announcing mail carries no file: it is much smaller than the file.
  const announce = s.a.store.outbox.due(Number.MAX_SAFE_INTEGER)[0];
  assert.ok(announce.raw.length < 40_000, `announce is ${announce.raw.length} bytes`);
  // Every part mail, encrypted, signed and armored, fits the relay's limit of 64 KiB with the
  // room for relays' headers kept free, as a chat mail does (decideSize).
  await s.a.transfers.pump();
  const parts = s.a.store.outbox.due(Number.MAX_SAFE_INTEGER).filter((r) => r.msgId === 0);
  assert.ok(parts.length > 0);
  for (const row of parts) {
    assert.ok(
      row.raw.length <= 64 * 1024 - RELAY_HEADER_ROOM_BYTES,
      `${row.rfc724Mid}: ${row.raw.length} bytes`,
    );
  }
  // The bound is OpenPGP's safe one (as for chat mails), so a part comes within 8 KiB of it.
  assert.ok(parts[0].raw.length > 64 * 1024 - RELAY_HEADER_ROOM_BYTES - 8192, "a part fills it");
  await exchange(s);
  const incoming = kinds(s.b, "IncomingMsg");
  assert.equal(incoming.length, 1);
  const m = s.b.store.msgs.get((incoming[0] as { msgId: number }).msgId)!;
  assert.equal(m.text, "big");
  assert.equal(m.fileBytes, 100_000);
  assert.equal(sha(await Deno.readFile(`${tmp.path}/b/${m.file}`)), sha(s.bytes));
  assert.equal(s.a.store.transfers.byMessage(msgId)!.state, "done");
  assert.equal(kinds(s.a, "TransferDone").length, 1);
  const inDone = kinds(s.b, "TransferDone");
  assert.equal(inDone.length, 1);
  assert.deepEqual(s.a.transfers.view(msgId)?.pending, []);
});

Deno.test("a lost part is asked for after the quiet time, not before, and the file completes", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  const msgId = await send(s);
  const id = s.a.store.transfers.byMessage(msgId)!.id;
  let dropped = 0;
  await exchange(s, (mid) => mid.startsWith(`t-${id}-1-`) && dropped++ === 0);
  assert.equal(dropped, 1);
  assert.equal(kinds(s.b, "IncomingMsg").length, 0, "nothing shown with a part missing");
  // Before the quiet time: no request.
  s.clock.now += DEFAULT_TRANSFER_OPTIONS.requestAfterMs - 1_000;
  await s.b.transfers.sweep();
  assert.equal(s.b.store.outbox.count(), 0);
  // After it: one request naming the missing part, answered to B alone.
  s.clock.now += 2_000;
  await s.b.transfers.sweep();
  assert.equal(s.b.store.outbox.count(), 1);
  await exchange(s);
  assert.equal(kinds(s.b, "IncomingMsg").length, 1);
  assert.equal(s.a.store.transfers.byMessage(msgId)!.state, "done");
});

Deno.test("parts handed over twice change nothing; progress is throttled and ends at 100 %", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  await send(s);
  await s.a.transfers.pump();
  const rows = s.a.store.outbox.due(Number.MAX_SAFE_INTEGER);
  for (const r of rows) {
    await s.b.receiver.receive(r.raw);
    assert.equal((await s.b.receiver.receive(r.raw)).kind, "transfer");
  }
  await exchange(s);
  assert.equal(kinds(s.b, "IncomingMsg").length, 1);
  // The clock stood still: only the first report and the last got through.
  const progress = kinds(s.b, "TransferProgress") as { bytes: number; total: number }[];
  assert.deepEqual(progress.map((p) => p.bytes === p.total), [false, true]);
});

Deno.test("cancel_transfer drops queued parts, fails the message and ends the receiver's side", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  const msgId = await send(s);
  await s.a.transfers.pump();
  // The announcement and the first part reach B; the other parts do not.
  const [announce, first] = s.a.store.outbox.due(Number.MAX_SAFE_INTEGER);
  for (const row of [announce, first]) {
    assert.equal((await s.b.receiver.receive(row.raw)).kind, "transfer");
    s.a.store.outbox.remove(row.id);
  }
  const partial = () =>
    [...Deno.readDirSync(`${tmp.path}/b`)].filter((e) => e.name.endsWith(".part")).length;
  assert.equal(partial(), 1);
  assert.equal(await s.a.transfers.cancel(msgId), true);
  assert.equal(await s.a.transfers.cancel(msgId), false);
  assert.equal(s.a.store.msgs.get(msgId)!.state, 24);
  const failed = kinds(s.a, "TransferFailed") as { reason: string }[];
  assert.deepEqual(failed.map((f) => f.reason), ["cancelled"]);
  await exchange(s);
  const bFailed = kinds(s.b, "TransferFailed") as { reason: string }[];
  assert.deepEqual(bFailed.map((f) => f.reason), ["cancelled_by_sender"]);
  assert.equal(kinds(s.b, "IncomingMsg").length, 0);
  assert.equal(partial(), 0, "the partial blob is removed");
});

Deno.test("a file over the limit to a peer without the capability is -1, nothing stored", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path, false);
  await assert.rejects(
    () => send(s),
    (e: Error) =>
      e instanceof GatewayError && e.message.includes("(100000 bytes)") &&
      e.message.includes("limit of 65536 bytes") && e.message.includes("b@x.test"),
  );
  assert.equal(s.a.store.outbox.count(), 0);
  assert.deepEqual(s.a.store.transfers.active("out"), []);
  assert.equal(s.a.store.msgs.lastOfChat(s.chatId), undefined);
});

Deno.test("every signed mail announces the capability and the receiver records it", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path, false);
  const aOnB = s.b.store.contacts.byFingerprint(s.a.self.fingerprint)!;
  assert.equal(s.b.store.contacts.hasLargeFiles(aOnB.id), false);
  await s.a.sendMessage({ chatId: s.chatId, text: "hi" });
  await exchange(s);
  assert.equal(s.b.store.contacts.hasLargeFiles(aOnB.id), true);
  assert.equal(Header.EDGE_CAPABILITIES, "Edge-Capabilities");
});

Deno.test("a receiver without the disk space refuses before writing; the sender's message fails", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path, true, { diskReserveBytes: Number.MAX_SAFE_INTEGER });
  const msgId = await send(s);
  await exchange(s);
  const refused = kinds(s.b, "TransferFailed") as { reason: string; direction: string }[];
  assert.deepEqual(refused.map((e) => [e.reason, e.direction]), [["no_space", "in"]]);
  assert.ok(
    kinds(s.b, "Warning").some((w) => /refused: no_space/.test((w as { msg: string }).msg)),
  );
  assert.equal(kinds(s.b, "IncomingMsg").length, 0);
  assert.throws(() => Deno.statSync(`${tmp.path}/b`), Deno.errors.NotFound, "nothing written");
  const t = s.a.store.transfers.byMessage(msgId)!;
  assert.deepEqual([t.state, t.reason], ["failed", "refused by b@x.test: no_space"]);
  assert.equal(s.a.store.msgs.get(msgId)!.state, 24);
});

Deno.test("a transfer above the receiver's largest file is refused as too_large", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path, true, { maxFileBytes: 50_000 });
  const msgId = await send(s);
  await exchange(s);
  const refused = kinds(s.b, "TransferFailed") as { reason: string }[];
  assert.deepEqual(refused.map((e) => e.reason), ["too_large"]);
  assert.equal(s.a.store.transfers.byMessage(msgId)!.state, "failed");
});

Deno.test("a request is answered with parts already sent; the rest follow on the first pass", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  const msgId = await send(s);
  await s.a.transfers.pump(); // the window: announcement, parts 0 and 1
  const rows = s.a.store.outbox.due(Number.MAX_SAFE_INTEGER);
  assert.equal(rows.length, 3);
  for (const r of rows.slice(0, 2)) await s.b.receiver.receive(r.raw); // part 1 is lost
  for (const r of rows) s.a.store.outbox.remove(r.id);
  s.clock.now += DEFAULT_TRANSFER_OPTIONS.requestAfterMs + 1;
  await s.b.transfers.sweep();
  await deliver(s.b, s.a);
  const t = s.a.store.transfers.byMessage(msgId)!;
  assert.deepEqual(t.resend, [{ addr: "b@x.test", parts: [1] }], "not the parts still to come");
  await exchange(s);
  assert.equal(kinds(s.b, "IncomingMsg").length, 1);
});

Deno.test("in a group, a member that refuses loses the file alone; the others get it", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  const c = await testAccount(
    "c@x.test",
    "C",
    `${tmp.path}/c`,
    0,
    () => s.clock.now,
    ACTIVE_LICENSE,
    { diskReserveBytes: Number.MAX_SAFE_INTEGER },
  );
  const { bOnA: cOnA } = introduce(s.a, c);
  s.a.store.contacts.setLargeFiles(c.self.fingerprint, true);
  const bOnA = s.a.store.contacts.byFingerprint(s.b.self.fingerprint)!.id;
  const group = s.a.groups.create("Clips");
  await s.a.groups.addMember(group, bOnA);
  await s.a.groups.addMember(group, cOnA);
  await using file = await attach(s.path);
  const msgId = await s.a.sendMessage({ chatId: group, text: "for all", file: { source: file } });
  for (let round = 0; round < 50; round++) {
    await s.a.transfers.pump();
    const moved = (await deliver(s.a, s.b, c)).length + (await deliver(s.b, s.a)).length +
      (await deliver(c, s.a)).length;
    if (moved === 0 && s.a.store.outbox.count() === 0) break;
  }
  assert.equal(kinds(s.b, "IncomingMsg").length, 1, "B has the file");
  const cFailed = kinds(c, "TransferFailed") as { reason: string }[];
  assert.deepEqual(cFailed.map((e) => e.reason), ["no_space"]);
  const t = s.a.store.transfers.byMessage(msgId)!;
  assert.deepEqual([t.state, t.confirmed, t.refused], ["done", ["b@x.test"], ["c@x.test"]]);
  assert.ok(
    kinds(s.a, "Warning").some((w) =>
      /refused by c@x.test: no_space/.test((w as { msg: string }).msg)
    ),
  );
  assert.notEqual(s.a.store.msgs.get(msgId)!.state, 24, "the message did not fail");
});

Deno.test("parts of 64 KiB or more are spooled within the limit; a cancel removes their files", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  const limit = 256 * 1024;
  s.a.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(limit));
  const bytes = new Uint8Array(600_000);
  for (let i = 0; i < bytes.length; i += 60_000) {
    crypto.getRandomValues(bytes.subarray(i, i + 60_000));
  }
  await Deno.writeFile(s.path, bytes);
  const msgId = await send(s);
  await s.a.transfers.pump();
  const parts = s.a.store.outbox.due(Number.MAX_SAFE_INTEGER).filter((r) => r.msgId === 0);
  assert.equal(parts.length, 2, "the window's two parts");
  for (const row of parts) {
    assert.notEqual(row.spool, "", "rendered into the spool");
    const size = (await Deno.stat(s.a.ctx.spool.path(row.spool))).size;
    assert.ok(size <= limit - RELAY_HEADER_ROOM_BYTES, `${row.rfc724Mid}: ${size} bytes`);
  }
  assert.equal(await s.a.transfers.cancel(msgId), true);
  assert.equal(s.a.store.outbox.spools().length, 0);
  for (const row of parts) {
    await assert.rejects(() => Deno.stat(s.a.ctx.spool.path(row.spool)), Deno.errors.NotFound);
  }
});

Deno.test("spooled parts arrive whole: the receiver shows the file once", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  s.a.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(256 * 1024));
  const bytes = new Uint8Array(300_000);
  for (let i = 0; i < bytes.length; i += 60_000) {
    crypto.getRandomValues(bytes.subarray(i, i + 60_000));
  }
  await Deno.writeFile(s.path, bytes);
  await send(s);
  await exchange(s);
  const [inc] = kinds(s.b, "IncomingMsg") as { msgId: number }[];
  const m = s.b.store.msgs.get(inc.msgId)!;
  assert.deepEqual(await Deno.readFile(`${tmp.path}/b/${m.file}`), bytes);
  assert.equal(kinds(s.b, "IncomingMsg").length, 1);
});

Deno.test("parts read by the streamed reader (from a file) are taken from its temp file", async () => {
  await using tmp = await makeTempDir("transfer");
  const s = await setup(tmp.path);
  s.a.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(256 * 1024));
  const bytes = new Uint8Array(300_000);
  for (let i = 0; i < bytes.length; i += 60_000) {
    crypto.getRandomValues(bytes.subarray(i, i + 60_000));
  }
  await Deno.writeFile(s.path, bytes);
  await send(s);
  for (let round = 0; round < 10 && kinds(s.b, "IncomingMsg").length === 0; round++) {
    await s.a.transfers.pump();
    for (const row of s.a.store.outbox.due(Number.MAX_SAFE_INTEGER)) {
      // As the IMAP drain hands a large mail over: a file the reader streams.
      const path = `${tmp.path}/mail-${row.id}.eml`;
      await Deno.writeFile(path, await mailBytes(s.a, row));
      const size = (await Deno.stat(path)).size;
      const out = await s.b.receiver.receiveMail({ kind: "file", path, size });
      assert.ok(out.kind === "transfer", `${row.rfc724Mid}: ${JSON.stringify(out)}`);
      s.a.store.outbox.remove(row.id);
    }
  }
  const [inc] = kinds(s.b, "IncomingMsg") as { msgId: number }[];
  const m = s.b.store.msgs.get(inc.msgId)!;
  assert.deepEqual(await Deno.readFile(`${tmp.path}/b/${m.file}`), bytes);
  const temps = [...Deno.readDirSync(`${tmp.path}/b`)].filter((e) => e.name.startsWith("."));
  assert.deepEqual(temps.map((e) => e.name), [], "no temp or partial file is left");
});
