/**
 * Tests of provision/keys.ts: a new key names the address; a key stored before the relay
 * notation gets it once at start-up, re-signed and stored back with the same fingerprint; a new
 * address replaces it; a key naming the address is left byte for byte.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { storedForm } from "../../src/crypto/keygen.ts";
import { keyRelays } from "../../src/crypto/key_relays.ts";
import { setLogSink } from "../../src/log.ts";
import { ensureAccountKey } from "../../src/provision/keys.ts";
import { Store } from "../../src/store/mod.ts";

const ADDR = "gw1@relay.test";

/** A key as accounts provisioned before the notation have it (no direct-key signature). */
async function oldKey(addr: string) {
  const { privateKey } = await openpgp.generateKey({
    type: "ecc",
    curve: "ed25519Legacy",
    userIDs: [{ email: addr }],
    format: "object",
  });
  return storedForm(privateKey);
}

/** What the stored public key says, checked the way a peer reads it. */
async function storedRelays(store: Store): Promise<string[] | undefined> {
  const pub = await openpgp.readKey({ binaryKey: store.keys.current()!.publicKey });
  await pub.verifyPrimaryKey(); // the self-signature still verifies
  await pub.getEncryptionKey();
  return await keyRelays(pub);
}

async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const store = Store.open(":memory:");
  try {
    await fn(store);
  } finally {
    store.close();
  }
}

/** Log lines written while `fn` runs. */
async function logged(fn: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    await fn();
  } finally {
    setLogSink(prev);
  }
  return lines;
}

Deno.test("a new key names the account's address in its relay notation", async () => {
  await withStore(async (store) => {
    const { created, fingerprint } = await ensureAccountKey(store, ADDR);
    assert.equal(created, true);
    assert.equal(store.keys.current()!.fingerprint, fingerprint);
    assert.deepEqual(await storedRelays(store), [ADDR]);
    const before = store.keys.current()!;
    const lines = await logged(() => ensureAccountKey(store, ADDR));
    assert.deepEqual(store.keys.current(), before, "a restart leaves it as it is");
    assert.ok(!lines.some((l) => /re-signed/.test(l)));
  });
});

Deno.test("an old key gets the notation once, same fingerprint, private and public stored", async () => {
  await withStore(async (store) => {
    const old = await oldKey(ADDR);
    store.keys.add(old);
    assert.equal(await storedRelays(store), undefined);

    const lines = await logged(() => ensureAccountKey(store, ADDR));
    assert.equal(lines.filter((l) => /account key re-signed/.test(l)).length, 1);
    const now = store.keys.current()!;
    assert.equal(now.fingerprint, old.fingerprint);
    assert.deepEqual(await storedRelays(store), [ADDR]);
    const priv = await openpgp.readPrivateKey({ armoredKey: now.privateKey });
    assert.deepEqual(await keyRelays(priv), [ADDR], "the private key carries it too");
    const was = await openpgp.readKey({ binaryKey: old.publicKey });
    const is = await openpgp.readKey({ binaryKey: now.publicKey });
    assert.equal(
      (await is.getEncryptionKey()).getKeyID().toHex(),
      (await was.getEncryptionKey()).getKeyID().toHex(),
      "the same encryption subkey",
    );
    assert.equal(store.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM keypairs")?.n, 1);

    const again = await logged(() => ensureAccountKey(store, ADDR));
    assert.deepEqual(store.keys.current(), now, "idempotent: the second start changes nothing");
    assert.ok(!again.some((l) => /re-signed/.test(l)));
  });
});

Deno.test("when the address changes, the notation follows it", async () => {
  await withStore(async (store) => {
    await ensureAccountKey(store, ADDR);
    const fingerprint = store.keys.current()!.fingerprint;
    await ensureAccountKey(store, "Renamed@Relay.test");
    assert.deepEqual(await storedRelays(store), ["renamed@relay.test"]);
    assert.equal(store.keys.current()!.fingerprint, fingerprint);
  });
});
