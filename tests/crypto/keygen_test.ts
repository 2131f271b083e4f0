/** Tests of keygen.ts: the account key has Delta Chat's / Autocrypt Level 1 shape. */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { keyRelays } from "../../src/crypto/key_relays.ts";

/** Packet tags of a binary OpenPGP packet sequence (new-format headers, as OpenPGP.js writes). */
function packetTags(bytes: Uint8Array): number[] {
  const tags: number[] = [];
  let i = 0;
  while (i < bytes.length) {
    const tag = bytes[i] & 0x3f;
    let len = bytes[i + 1];
    let hdr = 2;
    if (len >= 192 && len < 224) {
      len = ((len - 192) << 8) + bytes[i + 2] + 192;
      hdr = 3;
    } else if (len === 255) {
      len = new DataView(bytes.buffer, bytes.byteOffset + i + 2, 4).getUint32(0);
      hdr = 6;
    }
    tags.push(tag);
    i += hdr + len;
  }
  return tags;
}

Deno.test("generateAccountKey() makes an Ed25519 + Cv25519 key with UID <addr> and 6 public packets", async () => {
  const key = await generateAccountKey("gw@example.org");
  assert.match(key.fingerprint, /^[0-9A-F]{40}$/);
  assert.deepEqual(packetTags(key.publicKey), [6, 2, 13, 2, 14, 2], "key, direct sig, UID, …");
  const pub = await openpgp.readKey({ binaryKey: key.publicKey });
  assert.equal(pub.getFingerprint().toUpperCase(), key.fingerprint);
  assert.deepEqual(pub.getUserIDs(), ["<gw@example.org>"]);
  assert.equal(pub.keyPacket.version, 4);
  assert.equal(pub.keyPacket.algorithm, openpgp.enums.publicKey.eddsaLegacy);
  assert.equal(pub.subkeys.length, 1);
  assert.equal(pub.subkeys[0].keyPacket.algorithm, openpgp.enums.publicKey.ecdh);
  assert.equal(pub.subkeys[0].getAlgorithmInfo().curve, "curve25519Legacy");
  await pub.getEncryptionKey(); // throws when no valid encryption subkey is bound
  await pub.verifyPrimaryKey(); // the direct-key signature does not spoil the self-signature
  const priv = await openpgp.readPrivateKey({ armoredKey: key.privateKey });
  assert.ok(priv.isDecrypted(), "stored unencrypted; the data directory (0700) protects it");
  assert.doesNotMatch(key.privateKey, /Version:|Comment:/);
});

Deno.test("generateAccountKey() names the address, lower-cased, in the relays@chatmail.at notation", async () => {
  const key = await generateAccountKey("Gw@Example.org");
  const pub = await openpgp.readKey({ binaryKey: key.publicKey });
  assert.deepEqual(await keyRelays(pub), ["gw@example.org"]);
  const priv = await openpgp.readPrivateKey({ armoredKey: key.privateKey });
  assert.deepEqual(await keyRelays(priv), ["gw@example.org"], "the stored private key has it too");
});
