/** The seam for the direct path: a new outgoing transfer is offered to the strategy first. */
import assert from "node:assert/strict";
import { createCoreContext } from "../../../src/core/context.ts";
import { type DirectOffer, TransferManager } from "../../../src/core/transfer/mod.ts";
import { Store } from "../../../src/store/mod.ts";
import { makeTempDir } from "../../_helpers/temp.ts";

const BLOB = "0123456789abcdef0123456789abcdef.bin";

function setup(take: boolean, blobDir: string) {
  Deno.writeFileSync(`${blobDir}/${BLOB}`, new Uint8Array(10));
  const store = Store.open(":memory:");
  const ctx = createCoreContext({ store, events: { publish() {} }, blobDir });
  const offers: DirectOffer[] = [];
  const sealed: string[] = [];
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
      offer: (o) => {
        offers.push(o);
        return Promise.resolve(take);
      },
    },
  });
  store.contacts.insert({
    addr: "b@x",
    fingerprint: "B".repeat(40),
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
    id: "0".repeat(32),
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
  return { store, manager, offers, sealed };
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
