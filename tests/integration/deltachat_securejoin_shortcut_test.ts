/**
 * Delta Chat 2.57's SecureJoin shortcut with the gateway as inviter, on the real relay (chatmail
 * filter on): once Delta Chat has the gateway's key, whose `relays@chatmail.at` notation names
 * the invite's address, its next joins skip vg-/vc-request and auth-required and send
 * vg-/vc-request-with-auth at once; the gateway accepts it, and the group works both ways. A
 * gateway whose stored key predates the notation gets it at restart, with the same effect.
 */
import assert from "node:assert/strict";
import * as openpgp from "openpgp";
import { storedForm } from "../../src/crypto/keygen.ts";
import { keyRelays } from "../../src/crypto/key_relays.ts";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { readStoredAccount, replaceStoredKey } from "../_helpers/gateway_store.ts";
import { secureJoinStepsReceived } from "../_helpers/log_lines.ts";
import { dcSecureJoin, dcTexts, dump, eventually, gwTexts } from "../_helpers/mixed_peers.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const ignore = NO_RELAY || !deltaChatInstalled();

interface DcChat {
  chatType: string;
  name: string;
  contactIds: number[];
  selfInGroup: boolean;
}

/** The steps the gateway received after the first `from` of them, once `count` have come. */
function stepsAfter(gw: GatewayPeer, from: number, count: number): Promise<string[]> {
  return eventually(
    () => Promise.resolve(secureJoinStepsReceived(gw.daemon.output()).slice(from)),
    (steps) => steps.length >= count,
    `${count} SecureJoin step(s) on ${gw.name}`,
  );
}

/** The gateway's inviter progress 1000 for `chatId` (from event index `from` on). */
function inviterDone(gw: GatewayPeer, chatId: number, from: number) {
  return gw.waitForEvent(
    (e) =>
      e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000 &&
      e.event.chat_id === chatId,
    60_000,
    from,
  );
}

Deno.test({
  name: "Delta Chat takes the SecureJoin shortcut to a gateway whose key it has",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using gw = await GatewayPeer.start("Edge GW", relay);
    await using dc = await DeltaChatPeer.start("dora", relay, { displayName: "Dora" });
    try {
      // First group: Delta Chat has no key of ours yet, so the full legacy flow.
      const g1 = await gw.call<number>("create_group_chat", 1, "First", false);
      let from = gw.events.length;
      const dc1 = await dcSecureJoin(
        dc,
        await gw.call<string>("get_chat_securejoin_qr_code", 1, g1),
      );
      await inviterDone(gw, g1, from);
      assert.deepEqual(await stepsAfter(gw, 0, 2), ["vg-request", "vg-request-with-auth"]);

      // Delta Chat now holds the key as the gateway sent it: the notation names its address.
      const gwOnDc = (await dc.call<number[]>("get_chat_contacts", dc.accountId, dc1))
        .find((id) => id !== 1)!;
      const contact = await dc.call<{ address: string; isVerified: boolean }>(
        "get_contact",
        dc.accountId,
        gwOnDc,
      );
      assert.deepEqual([contact.address, contact.isVerified], [gw.addr, true]);

      // Second group: the shortcut. The gateway gets vg-request-with-auth and nothing before it.
      const g2 = await gw.call<number>("create_group_chat", 1, "Second", false);
      from = gw.events.length;
      const seen = secureJoinStepsReceived(gw.daemon.output()).length;
      const dc2 = await dcSecureJoin(
        dc,
        await gw.call<string>("get_chat_securejoin_qr_code", 1, g2),
      );
      const done = await inviterDone(gw, g2, from);
      assert.deepEqual([done.event.chat_type, done.event.contact_id !== undefined], [120, true]);
      assert.deepEqual(await stepsAfter(gw, seen, 1), ["vg-request-with-auth"]);

      // Delta Chat is a member, sees the group by its name, and messages go both ways (its
      // mail to our key's listed relay address reaches the gateway).
      const chat = await eventually(
        () => dc.call<DcChat>("get_full_chat_by_id", dc.accountId, dc2),
        (c) => c.selfInGroup && c.contactIds.length === 2,
        "Dora is in the second group",
      );
      assert.deepEqual([chat.chatType, chat.name], ["Group", "Second"]);
      await gw.call("send_msg", 1, g2, { text: "welcome, Dora" });
      await eventually(() => dcTexts(dc, dc2), (t) => t.includes("welcome, Dora"), "Dora reads");
      await dc.call("send_msg", dc.accountId, dc2, { text: "thanks" });
      await eventually(() => gwTexts(gw, g2), (t) => t.includes("thanks"), "gateway reads");

      // A 1:1 invite takes the shortcut too: vc-request-with-auth directly.
      const before = secureJoinStepsReceived(gw.daemon.output()).length;
      from = gw.events.length;
      await dcSecureJoin(dc, await gw.call<string>("get_chat_securejoin_qr_code", 1, null));
      await gw.waitForEvent(
        (e) => e.event.type === "SecurejoinInviterProgress" && e.event.chat_type === 100,
        60_000,
        from,
      );
      assert.deepEqual(await stepsAfter(gw, before, 1), ["vc-request-with-auth"]);
    } catch (err) {
      await dump(relay, [gw], [dc], err);
    }
  },
});

/** The key as versions before the notation stored it: the same key without direct signatures. */
async function withoutNotation(armored: string) {
  const key = await openpgp.readPrivateKey({ armoredKey: armored });
  const packets = new openpgp.PacketList<openpgp.AnyPacket>();
  for (const p of key.toPacketList()) {
    const direct = p instanceof openpgp.SignaturePacket &&
      p.signatureType === openpgp.enums.signature.key;
    if (!direct) packets.push(p);
  }
  return storedForm(new openpgp.PrivateKey(packets));
}

Deno.test({
  name: "a key from before the notation gets it at restart; Delta Chat then takes the shortcut",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using data = await makeTempDir("gw-old-key");
    const dataDir = `${data.path}/data`;
    const first = await GatewayPeer.start("Edge GW", relay, { dataDir });
    await first.stop();
    const provisioned = readStoredAccount(dataDir);
    const old = await withoutNotation(provisioned.privateKey);
    assert.equal(old.fingerprint, provisioned.fingerprint);
    replaceStoredKey(dataDir, old);

    await using gw = await GatewayPeer.start("Edge GW", relay, { dataDir });
    await using dc = await DeltaChatPeer.start("dora", relay, { displayName: "Dora" });
    try {
      const now = readStoredAccount(dataDir);
      assert.equal(now.fingerprint, provisioned.fingerprint, "the same key, re-signed");
      const pub = await openpgp.readKey({ binaryKey: now.publicKey });
      await pub.verifyPrimaryKey();
      assert.deepEqual(await keyRelays(pub), [gw.addr]);
      assert.match(gw.daemon.output(), /account key re-signed to name its relay address/);

      // A 1:1 join first: Delta Chat learns the re-signed key through the full flow.
      let from = gw.events.length;
      await dcSecureJoin(dc, await gw.call<string>("get_chat_securejoin_qr_code", 1, null));
      await gw.waitForEvent(
        (e) => e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000,
        60_000,
        from,
      );
      assert.deepEqual(await stepsAfter(gw, 0, 2), ["vc-request", "vc-request-with-auth"]);

      // Then a group: straight to vg-request-with-auth, and the group works.
      const g = await gw.call<number>("create_group_chat", 1, "Upgraded", false);
      from = gw.events.length;
      const seen = secureJoinStepsReceived(gw.daemon.output()).length;
      const dcGroup = await dcSecureJoin(
        dc,
        await gw.call<string>("get_chat_securejoin_qr_code", 1, g),
      );
      await inviterDone(gw, g, from);
      assert.deepEqual(await stepsAfter(gw, seen, 1), ["vg-request-with-auth"]);
      const chat = await eventually(
        () => dc.call<DcChat>("get_full_chat_by_id", dc.accountId, dcGroup),
        (c) => c.selfInGroup && c.contactIds.length === 2,
        "Dora is in the group",
      );
      assert.equal(chat.name, "Upgraded");
      await dc.call("send_msg", dc.accountId, dcGroup, { text: "after the upgrade" });
      await eventually(() => gwTexts(gw, g), (t) => t.includes("after the upgrade"), "gw reads");
    } catch (err) {
      await dump(relay, [gw], [dc], err);
    }
  },
});
