/**
 * The license gate and the protected-file rules on every send path: a `.prv` forwarded to a
 * contact whose SecureJoin handshake is still running is refused at the call (-32001, nothing
 * stored) without a license, like any other send of it; one admitted then is checked again when
 * the join completes (a license that lapsed meanwhile fails it), and goes out with its PDUs, as
 * a send at once does.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { RpcCode } from "../../src/constants.ts";
import { blobDirOf } from "../../src/core/context.ts";
import { GatewayError } from "../../src/errors.ts";
import { MessageState } from "../../src/constants.ts";
import { FakeLicense } from "../_helpers/fake_license.ts";
import { blobPath } from "../../src/core/blobs.ts";
import { openAttachableFile } from "../../src/core/file_access.ts";
import { Messages } from "../../src/core/chats/messages.ts";
import { deliverAll, testAccount } from "../core/_accounts.ts";
import { exchange, protectAndSend, prvPair } from "./_pair.ts";

const FORWARDABLE = { allow_download: false, allow_forward: true, duration_minutes: 0 };

/**
 * Alice protects a file for Bob (forwarding allowed) and sends it; Bob, whose license the test
 * switches, has just started to join Carol's invite. The file Bob forwards to Carol is his copy.
 */
async function midJoin() {
  const license = new FakeLicense("active"); // the test switches it off
  const p = await prvPair({ bob: license });
  const { bobMsg } = await protectAndSend(p, new Uint8Array(300), FORWARDABLE, "plan.pdf");
  await exchange(p);
  const carol = await testAccount(
    "carol@relay.test",
    "Carol",
    blobDirOf(`${p.dir.path}/c-data`),
    0,
    () => p.clock.now,
  );
  const chatId = await p.bob.secureJoin.join(carol.secureJoin.createInvite());
  const copy = blobPath(p.bob.ctx.blobDir, p.bob.store.msgs.get(bobMsg)!.file);
  const forward = async () => {
    await using file = await openAttachableFile(
      copy,
      { filesDir: p.filesDir, dataDir: dirname(p.bob.ctx.blobDir), blobDir: p.bob.ctx.blobDir },
      { method: "send_msg", verb: "sent" },
    );
    return await new Messages(p.bob.ctx).createOutgoing(
      { chatId, file: { source: file } },
      p.bob.send,
    );
  };
  const completeJoin = async () => {
    await deliverAll(p.bob, carol); // vc-request
    await deliverAll(carol, p.bob); // vc-auth-required
    await deliverAll(p.bob, carol); // vc-request-with-auth
    await deliverAll(carol, p.bob); // vc-contact-confirm: the join completes
  };
  const done = async () => {
    await carol.receipts.close();
    carol.store.close();
    await p[Symbol.asyncDispose]();
  };
  return { p, license, carol, chatId, forward, completeJoin, done };
}

Deno.test("without a license a .prv to a contact mid-join is refused at the call, nothing stored", async () => {
  const t = await midJoin();
  try {
    t.license.current = "no_license";
    const before = t.p.bob.store.countMessages();
    await assert.rejects(
      t.forward(),
      (err) => err instanceof GatewayError && err.code === RpcCode.LICENSE_REQUIRED,
    );
    assert.equal(t.p.bob.store.countMessages(), before, "nothing stored");
    assert.deepEqual(t.p.bob.store.msgs.waitingForJoin(t.chatId), [], "nothing waits");
  } finally {
    await t.done();
  }
});

Deno.test("a .prv that waited for a join fails when the license lapsed before the join completed", async () => {
  const t = await midJoin();
  try {
    const msgId = await t.forward();
    assert.deepEqual(t.p.bob.store.msgs.waitingForJoin(t.chatId).map((m) => m.id), [msgId]);
    t.license.current = "no_license";
    await t.completeJoin();
    const m = t.p.bob.store.msgs.get(msgId)!;
    assert.equal(m.state, MessageState.FAILED);
    assert.match(m.error, /License required/);
    assert.equal(t.p.bob.store.outbox.due(Number.MAX_SAFE_INTEGER).length, 0, "no mail for it");
  } finally {
    await t.done();
  }
});

Deno.test("a .prv that waited for a join goes out with its forward PDUs, as a send at once does", async () => {
  const t = await midJoin();
  try {
    const msgId = await t.forward();
    await t.completeJoin();
    const rows = t.p.bob.store.outbox.due(Number.MAX_SAFE_INTEGER).filter((r) => r.msgId === msgId);
    const m = t.p.bob.store.msgs.get(msgId)!;
    assert.equal(rows.length, 1, `queued once the join completed (${m.state} ${m.error})`);
    const out = await t.carol.receiver.receive(rows[0].raw);
    assert.equal(out.kind, "message");
    const stored = t.carol.store.msgs.get(out.kind === "message" ? out.msgId : 0)!;
    assert.ok(stored.file.endsWith(".prv"));
    assert.ok(
      t.carol.store.protectedFiles.receivedByMsg(stored.id) !== undefined,
      "the forward PDUs came with it",
    );
  } finally {
    await t.done();
  }
});

Deno.test("without a license a .prv forwarded at once is refused at the call, nothing stored", async () => {
  // No join involved: Bob sends his copy into his existing chat with Alice (verified at once).
  const license = new FakeLicense("active");
  await using p = await prvPair({ bob: license });
  const { bobMsg } = await protectAndSend(p, new Uint8Array(300), FORWARDABLE, "plan.pdf");
  await exchange(p);
  const received = p.bob.store.msgs.get(bobMsg)!;
  const copy = blobPath(p.bob.ctx.blobDir, received.file);
  license.current = "no_license";
  const before = p.bob.store.countMessages();
  await using file = await openAttachableFile(
    copy,
    { filesDir: p.filesDir, dataDir: dirname(p.bob.ctx.blobDir), blobDir: p.bob.ctx.blobDir },
    { method: "send_msg", verb: "sent" },
  );
  await assert.rejects(
    new Messages(p.bob.ctx).createOutgoing(
      { chatId: received.chatId, file: { source: file } },
      p.bob.send,
    ),
    (err) => err instanceof GatewayError && err.code === RpcCode.LICENSE_REQUIRED,
  );
  assert.equal(p.bob.store.countMessages(), before, "nothing stored");
  assert.equal(p.bob.outbox.length, 0, "nothing queued");
});
