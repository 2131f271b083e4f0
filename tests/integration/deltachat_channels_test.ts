/**
 * Broadcast channels with real Delta Chat 2.57 cores on the real relay (chatmail filter on):
 * (a) a channel a gateway owns, with a Delta Chat and a gateway subscriber: both get the posts,
 * a subscriber's reply arrives in its 1:1 chat, a Delta Chat subscriber's leave is applied;
 * (b) a channel Delta Chat owns, with a gateway subscriber: read-only, posts decrypted and shown,
 * a rename followed, leave works.
 */
import assert from "node:assert/strict";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { GatewayPeer, RpcError } from "../_helpers/gateway_peer.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";

const ignore = NO_RELAY || !deltaChatInstalled();

interface GwMsg {
  chatId: number;
  text: string;
  fromId: number;
}

interface GwChat {
  chatType: number;
  name: string;
  contactIds: number[];
  canSend: boolean;
  selfInGroup: boolean;
  channelRole: string | null;
}

async function gwTexts(gw: GatewayPeer, chatId: number): Promise<string[]> {
  const ids = await gw.call<number[]>("get_message_ids", 1, chatId, false, false);
  const msgs = await gw.call<Record<string, GwMsg>>("get_messages", 1, ids);
  return ids.map((id) => msgs[String(id)].text);
}

async function dcTexts(dc: DeltaChatPeer, chatId: number): Promise<string[]> {
  const ids = await dc.call<number[]>("get_message_ids", dc.accountId, chatId, false, false);
  const msgs = await dc.call<Record<string, { text: string }>>("get_messages", dc.accountId, ids);
  return ids.map((id) => msgs[String(id)].text);
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  let last: T = await fn();
  while (!ok(last)) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
    last = await fn();
  }
  return last;
}

async function dump(relay: Relay, gws: GatewayPeer[], dcs: DeltaChatPeer[], err: unknown) {
  for (const gw of gws) console.error(`--- ${gw.name} ---\n${gw.daemon.output().slice(-5000)}`);
  for (const dc of dcs) console.error(`--- ${dc.name} warnings ---\n${dc.warnings().join("\n")}`);
  console.error(
    await Deno.readTextFile(`${relay.dir}/log/filter.log`).then((t) => t.slice(-2000), () => ""),
  );
  throw err;
}

Deno.test({
  name: "a gateway's channel with a Delta Chat and a gateway subscriber",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using owner = await GatewayPeer.start("Edge News", relay);
    await using sub = await GatewayPeer.start("Edge Reader", relay);
    await using dora = await DeltaChatPeer.start("dora", relay, { displayName: "Dora" });
    try {
      const channel = await owner.call<number>("create_broadcast", 1, "Edge News");
      const mine = await owner.call<GwChat>("get_full_chat_by_id", 1, channel);
      assert.deepEqual([mine.chatType, mine.channelRole, mine.canSend, mine.contactIds], [
        130,
        "owner",
        true,
        [],
      ]);
      const link = await owner.call<string>("get_chat_securejoin_qr_code", 1, channel);
      assert.match(link, /&b=Edge\+News&x=.*&j=/);

      // Delta Chat subscribes.
      const df = dora.events.length;
      const doraChat = await dora.call<number>("secure_join", dora.accountId, link);
      await dora.waitForEvent(
        (e) => e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 1000,
        60_000,
        df,
      );
      const dc = await dora.call<{ chatType: string; name: string; canSend: boolean }>(
        "get_full_chat_by_id",
        dora.accountId,
        doraChat,
      );
      assert.deepEqual([dc.chatType, dc.name, dc.canSend], ["InBroadcast", "Edge News", false]);

      // The second gateway subscribes.
      const sf = sub.events.length;
      const subChat = await sub.call<number>("secure_join", 1, link);
      const joined = await sub.waitForEvent(
        (e) => e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000,
        60_000,
        sf,
      );
      assert.deepEqual([joined.event.chat_id, joined.event.chat_type], [subChat, 130]);
      const theirs = await sub.call<GwChat>("get_full_chat_by_id", 1, subChat);
      assert.deepEqual([theirs.chatType, theirs.channelRole, theirs.canSend], [
        130,
        "subscriber",
        false,
      ]);
      await eventually(
        () => owner.call<GwChat>("get_full_chat_by_id", 1, channel),
        (c) => c.contactIds.length === 2,
        "two subscribers",
      );

      // A post reaches both subscribers.
      await owner.call("send_msg", 1, channel, { text: "today's news" });
      await eventually(() => dcTexts(dora, doraChat), (t) => t.includes("today's news"), "dora");
      await eventually(() => gwTexts(sub, subChat), (t) => t.includes("today's news"), "sub");
      await assert.rejects(
        () => sub.call("send_msg", 1, subChat, { text: "may I?" }),
        (e) => e instanceof RpcError && e.code === -1 && /only its owner posts/.test(e.message),
      );

      // Dora replies: it arrives in the owner's 1:1 chat with her.
      const doraOwner = (await dora.call<number[]>("get_chat_contacts", dora.accountId, doraChat))
        .find((id) => id !== 1)!;
      const doraDm = await dora.call<number>(
        "create_chat_by_contact_id",
        dora.accountId,
        doraOwner,
      );
      const of = owner.events.length;
      await dora.call("send_msg", dora.accountId, doraDm, { text: "thanks!" });
      const inc = await owner.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, of);
      const reply = (await owner.call<Record<string, GwMsg>>("get_messages", 1, [
        inc.event.msg_id,
      ]))[String(inc.event.msg_id)];
      assert.equal(reply.text, "thanks!");
      const replyChat = await owner.call<GwChat>("get_full_chat_by_id", 1, reply.chatId);
      assert.equal(replyChat.chatType, 100);

      // Dora leaves: the owner drops her.
      await dora.call("leave_group", dora.accountId, doraChat);
      await eventually(
        () => owner.call<GwChat>("get_full_chat_by_id", 1, channel),
        (c) => c.contactIds.length === 1,
        "owner drops Dora",
      );
    } catch (err) {
      await dump(relay, [owner, sub], [dora], err);
    }
  },
});

Deno.test({
  name: "a Delta Chat channel with a gateway subscriber: read-only, posts shown, rename, leave",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using gw = await GatewayPeer.start("Edge Reader", relay);
    await using alice = await DeltaChatPeer.start("alice", relay, { displayName: "Alice" });
    try {
      const channel = await alice.call<number>("create_broadcast", alice.accountId, "DC News");
      const link = await alice.call<string>(
        "get_chat_securejoin_qr_code",
        alice.accountId,
        channel,
      );
      const gf = gw.events.length;
      const chat = await gw.call<number>("secure_join", 1, link);
      await gw.waitForEvent(
        (e) => e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000,
        60_000,
        gf,
      );
      const c = await gw.call<GwChat>("get_full_chat_by_id", 1, chat);
      assert.deepEqual([c.chatType, c.name, c.channelRole, c.canSend], [
        130,
        "DC News",
        "subscriber",
        false,
      ]);
      await eventually(
        () => alice.call<number[]>("get_chat_contacts", alice.accountId, channel),
        (ids) => ids.length === 1,
        "Alice sees the subscriber",
      );
      await alice.call("send_msg", alice.accountId, channel, { text: "hello subscribers" });
      await eventually(
        () => gwTexts(gw, chat),
        (t) => t.includes("hello subscribers"),
        "the gateway shows Alice's post",
      );
      await alice.call("set_chat_name", alice.accountId, channel, "DC Daily");
      await eventually(
        () => gw.call<GwChat>("get_full_chat_by_id", 1, chat),
        (c) => c.name === "DC Daily",
        "the gateway follows the channel's new name",
      );
      await gw.call("leave_group", 1, chat);
      await eventually(
        () => alice.call<number[]>("get_chat_contacts", alice.accountId, channel),
        (ids) => ids.length === 0,
        "Alice sees the gateway leave",
      );
      const left = await gw.call<GwChat>("get_full_chat_by_id", 1, chat);
      assert.equal(left.selfInGroup, false);
    } catch (err) {
      await dump(relay, [gw], [alice], err);
    }
  },
});
