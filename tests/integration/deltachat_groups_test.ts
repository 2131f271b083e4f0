/**
 * Groups with real Delta Chat 2.57 cores and two gateways on the real relay (chatmail filter
 * on): (a) a group Delta Chat creates reaches both gateways in one group chat with its name and
 * members, every member gets every message once, and a rename, an avatar, a Delta Chat user's
 * leave, the removal of a gateway (which then cannot send) and a gateway's leave are applied
 * everywhere; (b) a group a gateway creates shows in Delta Chat with its name, members and
 * senders; (c) group joins by invite both ways (a stranger and a verified contact joining the
 * gateway's groups), a third member seeing the new one.
 */
import assert from "node:assert/strict";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { GatewayPeer, RpcError } from "../_helpers/gateway_peer.ts";
import { NO_RELAY } from "../_helpers/relay.ts";
import {
  dcJoins,
  dcSecureJoin,
  dcTexts,
  dump,
  eventually,
  gwTexts,
} from "../_helpers/mixed_peers.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

const ignore = NO_RELAY || !deltaChatInstalled();

interface GwMsg {
  chatId: number;
  text: string;
  fromId: number;
  isInfo: boolean;
  sender: { displayName: string };
}

interface GwChat {
  chatType: number;
  name: string;
  contactIds: number[];
  pastContactIds: number[];
  selfInGroup: boolean;
  canSend: boolean;
}

interface DcChat {
  chatType: string;
  name: string;
  contactIds: number[];
  selfInGroup: boolean;
}

interface DcMsg {
  chatId: number;
  text: string;
  fromId: number;
  isInfo: boolean;
  sender: { address: string };
}

/** Gateway `a` joins `b`'s 1:1 invite; returns b's contact id on `a`. */
async function gwJoinsGateway(a: GatewayPeer, b: GatewayPeer): Promise<number> {
  const link = await b.call<string>("get_chat_securejoin_qr_code", 1, null);
  const from = a.events.length;
  await a.call<number>("secure_join", 1, link);
  const done = await a.waitForEvent(
    (e) => e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000,
    60_000,
    from,
  );
  return done.event.contact_id as number;
}

/** The gateway's incoming message with `text` (from event index `from` on). */
async function gwIncoming(gw: GatewayPeer, from: number, text: string): Promise<GwMsg> {
  for (let i = from;; i++) {
    const ev = await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, i);
    i = gw.events.indexOf(ev);
    const id = ev.event.msg_id as number;
    const m = (await gw.call<Record<string, GwMsg>>("get_messages", 1, [id]))[String(id)];
    if (m.text === text) return m;
  }
}

/** A 1×1 PNG. */
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const once = (list: string[], text: string) => list.filter((t) => t === text).length === 1;

twoGatewaysTest({
  name: "a Delta Chat group with two gateways: one group everywhere, changes applied on both",
  ignore,
  gateways: ["Edge One", "Edge Two"],
  async fn({ relay, a: gw1, b: gw2 }) {
    await using dora = await DeltaChatPeer.start("dora", relay, { displayName: "Dora" });
    await using eve = await DeltaChatPeer.start("eve", relay, { displayName: "Eve" });
    try {
      const gw1OnDora = await dcJoins(dora, gw1);
      const gw2OnDora = await dcJoins(dora, gw2);
      const eveOnDora = await dcJoins(dora, eve);
      const group = await dora.call<number>("create_group_chat", dora.accountId, "Ops", false);
      for (const c of [gw1OnDora, gw2OnDora, eveOnDora]) {
        await dora.call("add_contact_to_chat", dora.accountId, group, c);
      }
      const [f1, f2] = [gw1.events.length, gw2.events.length];
      await dora.call("send_msg", dora.accountId, group, { text: "hello all" });

      // Both gateways: the message lands in one group chat, type 120, with name and 4 members.
      const chats: number[] = [];
      for (const [gw, from] of [[gw1, f1], [gw2, f2]] as const) {
        const m = await gwIncoming(gw, from, "hello all");
        assert.equal(m.text, "hello all");
        const chat = await gw.call<GwChat>("get_full_chat_by_id", 1, m.chatId);
        assert.deepEqual([chat.chatType, chat.name, chat.selfInGroup, chat.canSend], [
          120,
          "Ops",
          true,
          true,
        ]);
        assert.equal(chat.contactIds.length, 4, `${gw.name}: Dora, Eve, the other gateway, self`);
        assert.ok(chat.contactIds.includes(1));
        chats.push(m.chatId);
      }
      const [g1, g2] = chats;

      // A gateway replies in the group: Dora, Eve and the other gateway get it in the group.
      const eveFrom = eve.events.length;
      await gw1.call("send_msg", 1, g1, { text: "reply from gw1" });
      await eventually(() => dcTexts(dora, group), (t) => once(t, "reply from gw1"), "dora");
      await eventually(() => gwTexts(gw2, g2), (t) => once(t, "reply from gw1"), "gw2");
      const inEve = await eve.waitForEvent((e) => e.event.kind === "IncomingMsg", 60_000, eveFrom);
      const eveGroup = inEve.event.chatId as number;
      await eventually(() => dcTexts(eve, eveGroup), (t) => once(t, "reply from gw1"), "eve");
      const eveChat = await eve.call<DcChat>("get_full_chat_by_id", eve.accountId, eveGroup);
      assert.deepEqual([eveChat.chatType, eveChat.name], ["Group", "Ops"]);
      const doraMsgs = await dora.call<number[]>(
        "get_message_ids",
        dora.accountId,
        group,
        false,
        false,
      );
      const last =
        (await dora.call<Record<string, DcMsg>>("get_messages", dora.accountId, doraMsgs))[
          String(doraMsgs.at(-1))
        ];
      assert.equal(last.fromId, gw1OnDora, "Delta Chat shows the gateway as the sender");

      // Eve writes: both gateways get it exactly once, in the group.
      await eve.call("send_msg", eve.accountId, eveGroup, { text: "eve here" });
      for (const [gw, chat] of [[gw1, g1], [gw2, g2]] as const) {
        await eventually(() => gwTexts(gw, chat), (t) => once(t, "eve here"), gw.name);
      }

      // Dora renames the group: both gateways follow.
      await dora.call("set_chat_name", dora.accountId, group, "Ops Team");
      for (const [gw, chat] of [[gw1, g1], [gw2, g2]] as const) {
        await eventually(
          () => gw.call<GwChat>("get_full_chat_by_id", 1, chat),
          (c) => c.name === "Ops Team",
          `${gw.name} rename`,
        );
      }

      // Dora sets a group image: both gateways show it.
      const png = `${relay.dir}/avatar.png`;
      await Deno.writeFile(png, Uint8Array.from(atob(PNG_1X1), (c) => c.charCodeAt(0)));
      await dora.call("set_chat_profile_image", dora.accountId, group, png);
      for (const [gw, chat] of [[gw1, g1], [gw2, g2]] as const) {
        await eventually(
          () => gw.call<GwChat & { profileImage: string | null }>("get_full_chat_by_id", 1, chat),
          (c) => c.profileImage !== null,
          `${gw.name} avatar`,
        );
      }

      // Eve leaves in Delta Chat: both gateways drop her and list her as a past member.
      await eve.call("leave_group", eve.accountId, eveGroup);
      for (const [gw, chat] of [[gw1, g1], [gw2, g2]] as const) {
        const c = await eventually(
          () => gw.call<GwChat>("get_full_chat_by_id", 1, chat),
          (c) => c.contactIds.length === 3,
          `${gw.name} sees Eve leave`,
        );
        assert.equal(c.pastContactIds.length, 1);
      }

      // Dora removes gateway 2: gateway 1 follows; gateway 2 is out and can no longer send.
      await dora.call("remove_contact_from_chat", dora.accountId, group, gw2OnDora);
      await eventually(
        () => gw1.call<GwChat>("get_full_chat_by_id", 1, g1),
        (c) => c.contactIds.length === 2,
        "gw1 sees gw2 removed",
      );
      const out = await eventually(
        () => gw2.call<GwChat>("get_full_chat_by_id", 1, g2),
        (c) => !c.selfInGroup,
        "gw2 learns it was removed",
      );
      assert.equal(out.canSend, false);
      await assert.rejects(
        () => gw2.call("send_msg", 1, g2, { text: "still there?" }),
        (e) => e instanceof RpcError && e.code === -1 && /not a member/.test(e.message),
      );

      // Gateway 1 leaves: Dora sees it.
      await gw1.call("leave_group", 1, g1);
      await eventually(
        () => dora.call<number[]>("get_chat_contacts", dora.accountId, group),
        (ids) => !ids.includes(gw1OnDora),
        "dora sees gw1 leave",
      );

      // Every message once on gateway 1 (texts of chat messages, info messages aside).
      const texts = await gwTexts(gw1, g1);
      for (const t of ["hello all", "reply from gw1", "eve here"]) assert.ok(once(texts, t), t);
    } catch (err) {
      await dump(relay, [gw1, gw2], [dora, eve], err);
    }
  },
});

twoGatewaysTest({
  name: "a gateway's group with Delta Chat and another gateway; group invites both ways",
  ignore,
  gateways: ["Edge One", "Edge Two"],
  async fn({ relay, a: gw1, b: gw2 }) {
    await using dora = await DeltaChatPeer.start("dora", relay, { displayName: "Dora" });
    await using eve = await DeltaChatPeer.start("eve", relay, { displayName: "Eve" });
    try {
      // (b) gateway 1 creates a group with Dora and gateway 2.
      const gw1OnDora = await dcJoins(dora, gw1);
      const doraOnGw1 = (await gw1.call<number[]>("get_contact_ids", 1, 0, null))
        .find((id) => id !== 1)!;
      const gw2OnGw1 = await gwJoinsGateway(gw1, gw2);
      const g1 = await gw1.call<number>("create_group_chat", 1, "Field Team", false);
      await gw1.call("add_contact_to_chat", 1, g1, doraOnGw1);
      await gw1.call("add_contact_to_chat", 1, g1, gw2OnGw1);
      const noKey = await gw1.call<number>("create_contact", 1, "nokey@example.org", "No Key")
        .catch(() => undefined);
      if (noKey !== undefined) {
        await assert.rejects(
          () => gw1.call("add_contact_to_chat", 1, g1, noKey),
          (e) => e instanceof RpcError && e.code === -1 && /no encryption key/.test(e.message),
        );
      }
      const [df, g2f] = [dora.events.length, gw2.events.length];
      await gw1.call("send_msg", 1, g1, { text: "briefing at 9" });
      const inDora = await dora.waitForEvent((e) => e.event.kind === "IncomingMsg", 60_000, df);
      const doraGroup = inDora.event.chatId as number;
      const dc = await dora.call<DcChat>("get_full_chat_by_id", dora.accountId, doraGroup);
      assert.deepEqual([dc.chatType, dc.name, dc.selfInGroup, dc.contactIds.length], [
        "Group",
        "Field Team",
        true,
        3,
      ]);
      const dm = await dora.call<DcMsg>("get_message", dora.accountId, inDora.event.msgId);
      assert.deepEqual([dm.text, dm.sender.address], ["briefing at 9", gw1.addr]);
      const m2 = await gwIncoming(gw2, g2f, "briefing at 9");
      const g2 = m2.chatId;
      assert.equal((await gw2.call<GwChat>("get_full_chat_by_id", 1, g2)).name, "Field Team");
      await dora.call("send_msg", dora.accountId, doraGroup, { text: "copy" });
      await eventually(() => gwTexts(gw1, g1), (t) => once(t, "copy"), "gw1 gets Dora's reply");
      await eventually(() => gwTexts(gw2, g2), (t) => once(t, "copy"), "gw2 gets Dora's reply");

      // (c) Eve (Delta Chat) joins by the gateway's group invite: Dora sees the new member.
      const link = await gw1.call<string>("get_chat_securejoin_qr_code", 1, g1);
      const eveGroup = await dcSecureJoin(eve, link);
      const inviter = await gw1.waitForEvent((e) =>
        e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000 &&
        e.event.chat_type === 120
      );
      assert.equal(inviter.event.chat_id, g1);
      await eventually(
        () => dora.call<number[]>("get_chat_contacts", dora.accountId, doraGroup),
        (ids) => ids.length === 4,
        "Dora sees Eve joined",
      );
      await eve.call("send_msg", eve.accountId, eveGroup, { text: "eve joined" });
      await eventually(() => gwTexts(gw2, g2), (t) => once(t, "eve joined"), "gw2 gets Eve");

      // (c) Dora, already verified with gateway 1, joins another of its groups by invite (Delta
      // Chat 2.57 takes the shortcut here, straight to vg-request-with-auth: it has our key, whose
      // relays@chatmail.at notation names the invite's address; see
      // deltachat_securejoin_shortcut_test.ts).
      const g3 = await gw1.call<number>("create_group_chat", 1, "Second", false);
      const link3 = await gw1.call<string>("get_chat_securejoin_qr_code", 1, g3);
      const dora3 = await dcSecureJoin(dora, link3);
      await eventually(
        () => dora.call<DcChat>("get_full_chat_by_id", dora.accountId, dora3),
        (c) => c.selfInGroup && c.name === "Second" && c.contactIds.length === 2,
        "Dora is in the second group",
      );

      // (c) gateway 2 joins Dora's own Delta Chat group by its https invite; gateway 1, already
      // a member there, sees it join.
      const dcGroup = await dora.call<number>("create_group_chat", dora.accountId, "Dora's", false);
      await dora.call("add_contact_to_chat", dora.accountId, dcGroup, gw1OnDora);
      const g1f = gw1.events.length;
      await dora.call("send_msg", dora.accountId, dcGroup, { text: "welcome gw1" });
      const inGw1 = await gwIncoming(gw1, g1f, "welcome gw1");
      const dcLink = await dora.call<string>(
        "get_chat_securejoin_qr_code",
        dora.accountId,
        dcGroup,
      );
      assert.match(dcLink, /^https:\/\/i\.delta\.chat\/#.*&x=.*&g=/);
      const gf = gw2.events.length;
      const joined = await gw2.call<number>("secure_join", 1, dcLink);
      const now = await gw2.call<GwChat>("get_full_chat_by_id", 1, joined);
      assert.deepEqual([now.chatType, now.name, now.selfInGroup], [120, "Dora's", false]);
      const done = await gw2.waitForEvent(
        (e) => e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000,
        60_000,
        gf,
      );
      assert.deepEqual([done.event.chat_id, done.event.chat_type], [joined, 120]);
      const member = await eventually(
        () => gw2.call<GwChat>("get_full_chat_by_id", 1, joined),
        (c) => c.selfInGroup,
        "gw2 becomes a member",
      );
      assert.ok(member.contactIds.length >= 2);
      await gw2.call("send_msg", 1, joined, { text: "gw2 in dora's group" });
      await eventually(
        () => dcTexts(dora, dcGroup),
        (t) => once(t, "gw2 in dora's group"),
        "Dora gets gw2's message in her group",
      );
      await eventually(
        () => gw1.call<GwChat>("get_full_chat_by_id", 1, inGw1.chatId),
        (c) => c.contactIds.length === 3,
        "gateway 1 sees gateway 2 join Dora's group",
      );
      await eventually(
        () => gwTexts(gw1, inGw1.chatId),
        (t) => once(t, "gw2 in dora's group"),
        "gateway 1 gets gateway 2's message",
      );
    } catch (err) {
      await dump(relay, [gw1, gw2], [dora, eve], err);
    }
  },
});
