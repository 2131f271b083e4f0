/** Tests of the split key and its device binding. */
import assert from "node:assert/strict";
import {
  deviceKeyOf,
  deviceTagOf,
  deviceWrap,
  joinShares,
  secondShare,
  splitKey,
  storedSecretKeysOf,
} from "../../src/protected_files/key_shares.ts";

Deno.test("splitKey(): S1 xor S2 is the CEK, a fresh S1 each time; the owner recomputes S2", () => {
  const cek = crypto.getRandomValues(new Uint8Array(32));
  const a = splitKey(cek);
  const b = splitKey(cek);
  assert.deepEqual(joinShares(a.s1, a.s2), cek);
  assert.deepEqual(joinShares(b.s1, b.s2), cek);
  assert.notDeepEqual(a.s1, b.s1, "a share per recipient");
  assert.notDeepEqual(a.s1, cek);
  assert.deepEqual(secondShare(cek, a.s1), a.s2);
  assert.throws(() => splitKey(new Uint8Array(16)), RangeError);
});

Deno.test("deviceWrap() is undone only under the same device key and file", () => {
  const s1 = crypto.getRandomValues(new Uint8Array(32));
  const here = deviceKeyOf("a".repeat(64));
  const there = deviceKeyOf("b".repeat(64));
  const stored = deviceWrap(here, "s1", "f1", s1);
  assert.notDeepEqual(stored, s1);
  assert.deepEqual(deviceWrap(here, "s1", "f1", stored), s1);
  assert.notDeepEqual(deviceWrap(there, "s1", "f1", stored), s1, "another device");
  assert.notDeepEqual(deviceWrap(here, "s1", "f2", stored), s1, "another file");
  assert.notDeepEqual(deviceWrap(here, "cek", "f1", stored), s1, "another label");
  assert.notEqual(deviceTagOf(here), deviceTagOf(there));
  assert.match(deviceTagOf(here), /^[0-9a-f]{16}$/);
});

Deno.test("storedSecretKeysOf(): the recipient key needs the same machine id, the owner key does not", () => {
  const secret = "5".repeat(64);
  const here = storedSecretKeysOf(secret, "m1");
  const otherHost = storedSecretKeysOf(secret, "m2");
  const copy = storedSecretKeysOf(secret, "m1");
  const otherInstallation = storedSecretKeysOf("6".repeat(64), "m1");
  assert.deepEqual(copy, here, "same secret, same machine: same keys (a new MAC plays no part)");
  assert.notDeepEqual(otherHost.recipient, here.recipient, "another host opens no received file");
  assert.deepEqual(otherHost.owner, here.owner, "sent files stay manageable on another host");
  assert.notDeepEqual(otherInstallation.owner, here.owner);
  assert.notDeepEqual(here.owner, here.recipient);
  assert.throws(() => storedSecretKeysOf("xyz", "m1"), /64 lower-case hex/);
});
