/**
 * Tests of key_relays.ts: the `relays@chatmail.at` direct-key signature is made by the primary
 * key, replaces an earlier one, keeps the key usable, and one from another key is not trusted.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import {
  directSignatures as directSigs,
  keyRelays,
  withKeyRelays,
} from "../../src/crypto/key_relays.ts";
import { KeyNotation } from "../../src/protocol.ts";

async function bareKey(addr: string): Promise<openpgp.PrivateKey> {
  const { privateKey } = await openpgp.generateKey({
    type: "ecc",
    curve: "ed25519Legacy",
    userIDs: [{ email: addr }],
    format: "object",
  });
  return privateKey;
}

Deno.test("a key made without the notation has no relays", async () => {
  assert.equal(await keyRelays(await bareKey("a@relay.test")), undefined);
});

Deno.test("withKeyRelays() adds one verifiable direct-key signature; the key stays usable", async () => {
  const bare = await bareKey("a@relay.test");
  const key = await withKeyRelays(bare, ["a@relay.test"]);
  assert.equal(key.getFingerprint(), bare.getFingerprint());
  assert.equal(await keyRelays(bare), undefined, "the input key is not changed");
  const pub = await openpgp.readKey({ binaryKey: key.toPublic().write() });
  assert.deepEqual(await keyRelays(pub), ["a@relay.test"]);
  const [sig] = directSigs(pub);
  const notation = sig.rawNotations.find((n) => n.name === KeyNotation.RELAYS)!;
  assert.deepEqual([notation.humanReadable, notation.critical], [true, false]);
  assert.equal(new TextDecoder().decode(notation.value), "a@relay.test");
  await pub.verifyPrimaryKey();
  await pub.getEncryptionKey();
  assert.deepEqual(pub.getUserIDs(), ["<a@relay.test>"]);

  // Mail to and from it still works.
  const message = await openpgp.createMessage({ text: "hi" });
  const encrypted = await openpgp.encrypt({ message, encryptionKeys: pub, signingKeys: key });
  const out = await openpgp.decrypt({
    message: await openpgp.readMessage({ armoredMessage: encrypted as string }),
    decryptionKeys: key,
    verificationKeys: pub,
    expectSigned: true,
  });
  assert.equal(out.data, "hi");
});

Deno.test("withKeyRelays() replaces the earlier list and keeps one direct-key signature", async () => {
  const once = await withKeyRelays(await bareKey("a@relay.test"), ["a@relay.test"]);
  const twice = await withKeyRelays(once, ["b@relay.test", "c@other.test"]);
  assert.deepEqual(await keyRelays(twice), ["b@relay.test", "c@other.test"]);
  assert.equal(directSigs(twice).length, 1);
  const pub = await openpgp.readKey({ binaryKey: twice.toPublic().write() });
  assert.equal(directSigs(pub).length, 1);
});

Deno.test("withKeyRelays() never dates the signature before the key", async () => {
  const bare = await bareKey("a@relay.test");
  const key = await withKeyRelays(bare, ["a@relay.test"], new Date(0));
  assert.ok(directSigs(key)[0].created!.getTime() >= bare.getCreationTime().getTime());
});

Deno.test("withKeyRelays() refuses an empty list, six addresses and what is no address", async () => {
  const key = await bareKey("a@relay.test");
  const six = Array.from({ length: 6 }, (_, i) => `r${i}@relay.test`);
  for (
    const [relays, message] of [[[], /1 to 5/], [six, /not 6/], [
      ["a,b@c.d"],
      /not a relay/,
    ]] as const
  ) {
    await assert.rejects(withKeyRelays(key, relays), (e: Error) => message.test(e.message));
  }
});

Deno.test("a relay notation signed by another key is not trusted", async () => {
  const victim = await bareKey("a@relay.test");
  const forger = await withKeyRelays(await bareKey("m@relay.test"), ["m@relay.test"]);
  const packets = victim.toPacketList();
  const forged = new openpgp.PacketList<openpgp.AnyPacket>();
  forged.push(packets[0], directSigs(forger)[0], ...packets.slice(1));
  assert.equal(await keyRelays(new openpgp.PrivateKey(forged)), undefined);
});
