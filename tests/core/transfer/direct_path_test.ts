/**
 * The seam for the direct path: a new outgoing transfer is offered to the strategy first, and the
 * path that carried it is kept in its row (events and `get_transfer` after a restart).
 */
import assert from "node:assert/strict";
import { type CoreContext, createCoreContext } from "../../../src/core/context.ts";
import type { ReadMail } from "../../../src/core/receive/mail_reader.ts";
import {
  type DirectHooks,
  type DirectOffer,
  formatControl,
  TransferManager,
} from "../../../src/core/transfer/mod.ts";
import { MimeHeaders } from "../../../src/mime/parser.ts";
import { Header } from "../../../src/protocol.ts";
import { Store } from "../../../src/store/mod.ts";
import { makeTempDir } from "../../_helpers/temp.ts";

const BLOB = "0123456789abcdef0123456789abcdef.bin";
const ID = "0".repeat(32);
const B_FP = "B".repeat(40);

type Event = Record<string, unknown>;

/** A transfer manager over `ctx` whose strategy takes (or not) what it is offered. */
function newManager(ctx: CoreContext, take: boolean) {
  const offers: DirectOffer[] = [];
  const sealed: string[] = [];
  const hooks: DirectHooks[] = [];
  const manager = new TransferManager({
    ctx,
    selfAddr: "a@x",
    sealer: {
      newMessageId: () => `${crypto.randomUUID()}@x`,
      seal: (_inner, _to, messageId) => {
        sealed.push(messageId);
        return Promise.reject(new Error("no relay parts in this test"));
      },
      sealStream: (_plaintext, _to, messageId) => {
        sealed.push(messageId);
        return Promise.reject(new Error("no relay parts in this test"));
      },
      sealedSizer: (fixed) => (n) => fixed + n,
    },
    direct: {
      offer: (o, h) => {
        offers.push(o);
        hooks.push(h);
        return Promise.resolve(take);
      },
    },
  });
  return { manager, offers, sealed, hooks };
}

function setup(take: boolean, blobDir: string) {
  Deno.writeFileSync(`${blobDir}/${BLOB}`, new Uint8Array(10));
  const store = Store.open(":memory:");
  const events: Event[] = [];
  const ctx = createCoreContext({
    store,
    events: { publish: (e) => void events.push(e as unknown as Event) },
    blobDir,
  });
  store.contacts.insert({
    addr: "b@x",
    fingerprint: B_FP,
    publicKey: new Uint8Array([1]),
  });
  const msgId = store.msgs.insert({
    rfc724Mid: "m@x",
    chatId: 10,
    fromId: 1,
    text: "",
    timestamp: 1,
    state: 20,
  });
  store.transfers.insert({
    id: ID,
    direction: "out",
    msgId,
    chatId: 10,
    size: 10,
    sha256: "a".repeat(64),
    partSize: 5,
    parts: 2,
    name: "f.bin",
    mime: "application/octet-stream",
    blob: BLOB,
    pending: ["b@x"],
    now: ctx.now(),
  });
  return { store, ctx, msgId, events, ...newManager(ctx, take) };
}

/** The recipient's `done` control mail for the transfer, as the reception pipeline reads it. */
function doneMail(): ReadMail {
  const headers = new MimeHeaders([
    [Header.EDGE_TRANSFER_CONTROL.toLowerCase(), formatControl({ id: ID, action: "done" })],
  ]);
  return { signer: B_FP, headers } as unknown as ReadMail;
}

Deno.test("a strategy that takes the transfer is offered it once; no part is rendered", async () => {
  await using tmp = await makeTempDir("direct");
  const { store, manager, offers, sealed } = setup(true, tmp.path);
  try {
    await manager.pump();
    await manager.pump();
    assert.equal(offers.length, 1);
    assert.deepEqual([offers[0].size, offers[0].recipients], [10, ["b@x"]]);
    assert.equal(sealed.length, 0);
  } finally {
    store.close();
  }
});

Deno.test("a strategy that declines leaves the transfer to relay parts", async () => {
  await using tmp = await makeTempDir("direct");
  const { store, manager, offers, sealed } = setup(false, tmp.path);
  try {
    await manager.pump(); // relay parts: the first part is sealed (and fails here, logged)
    assert.equal(offers.length, 1);
    assert.equal(sealed.length, 1);
  } finally {
    store.close();
  }
});

Deno.test("a transfer the direct path carried still reports path direct after a restart", async () => {
  await using tmp = await makeTempDir("direct");
  const { store, ctx, msgId, events, manager } = setup(true, tmp.path);
  try {
    await manager.pump();
    assert.equal(store.transfers.get("out", ID)?.path, "direct");
    assert.equal(manager.view(msgId)?.path, "direct");
    manager.close();
    // The process restarts: a new manager over the same database; nothing of the first in memory.
    const restarted = newManager(ctx, false).manager;
    assert.equal(restarted.view(msgId)?.path, "direct", "get_transfer before the done mail");
    await restarted.receive(doneMail(), () => Promise.resolve(new Uint8Array()));
    const done = events.filter((e) => e.kind === "TransferDone");
    assert.deepEqual(done.map((e) => [e.transferId, e.path]), [[ID, "direct"]]);
    assert.deepEqual(
      [restarted.view(msgId)?.state, restarted.view(msgId)?.path],
      ["done", "direct"],
    );
  } finally {
    store.close();
  }
});

Deno.test("a transfer handed back to relay parts reports path relay, also after a restart", async () => {
  await using tmp = await makeTempDir("direct");
  const { store, ctx, msgId, events, manager, hooks } = setup(true, tmp.path);
  try {
    await manager.pump();
    assert.equal(manager.view(msgId)?.path, "direct");
    hooks[0].fallback(false); // no connection came up: relay parts from now on
    assert.equal(store.transfers.get("out", ID)?.path, "relay");
    await manager.pump();
    manager.close();
    const restarted = newManager(ctx, false).manager;
    assert.equal(restarted.view(msgId)?.path, "relay");
    await restarted.receive(doneMail(), () => Promise.resolve(new Uint8Array()));
    const done = events.filter((e) => e.kind === "TransferDone");
    assert.deepEqual(done.map((e) => e.path), ["relay"]);
  } finally {
    store.close();
  }
});
