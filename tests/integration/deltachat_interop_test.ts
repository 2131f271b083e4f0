/**
 * Interop with the real Delta Chat core (2.57, @deltachat/stdio-rpc-server) through the relay
 * with the chatmail filter on: (a) Delta Chat joins the gateway's invite, (b) the gateway joins
 * Delta Chat's https invite, (c) text both ways, (d) files both ways with identical bytes,
 * including a large file Delta Chat splits into pre- and post-message, (e) Delta Chat's read
 * receipt moves our message to 28 with MsgRead, (f) what is done to messages after sending, both
 * ways: reactions, a reply quoting ours, edits and deletes for everyone, (g) Delta Chat's
 * disappearing-messages timer is followed and echoed, never turned off by our replies.
 */
import assert from "node:assert/strict";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";

interface GwMsg {
  chatId: number;
  text: string;
  state: number;
  fromId: number;
  file: string | null;
  fileName: string | null;
  fileBytes: number;
  viewtype: string;
  sender: { displayName: string };
  showPadlock: boolean;
}

interface DcMsg {
  chatId: number;
  text: string;
  fromId: number;
  file: string | null;
  fileName: string | null;
  viewType: string;
  showPadlock: boolean;
}

const ignore = NO_RELAY || !deltaChatInstalled();

/** Random bytes of any size (getRandomValues fills at most 64 KiB per call). */
function randomBytes(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(out.subarray(i, i + 65_536));
  return out;
}

async function gwMessage(gw: GatewayPeer, id: number): Promise<GwMsg> {
  return (await gw.call<Record<string, GwMsg>>("get_messages", 1, [id]))[String(id)];
}

async function dumpOnFailure(relay: Relay, gw: GatewayPeer, dc: DeltaChatPeer, err: unknown) {
  console.error(`--- gateway ---\n${gw.daemon.output().slice(-6000)}`);
  console.error(`--- delta chat warnings ---\n${dc.warnings().join("\n")}`);
  console.error(
    await Deno.readTextFile(`${relay.dir}/log/filter.log`).then((t) => t.slice(-3000), () => ""),
  );
  throw err;
}

Deno.test({
  name: "Delta Chat joins the gateway's invite; text, files and read receipts both ways",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using gw = await GatewayPeer.start("Edge GW", relay);
    await using dc = await DeltaChatPeer.start("dcpeer", relay, { displayName: "Dora" });
    try {
      // (a) Delta Chat joins our invite: both sides verified, a 1:1 chat on both.
      const link = await gw.call<string>("get_chat_securejoin_qr_code", 1, null);
      const dcChat = await dc.call<number>("secure_join", dc.accountId, link);
      await dc.waitForEvent((e) =>
        e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 1000
      );
      const done = await gw.waitForEvent((e) =>
        e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000
      );
      const gwChat = done.event.chat_id as number;
      const dcOnGw = done.event.contact_id as number;
      const contact = await gw.call<{ isVerified: boolean; address: string; displayName: string }>(
        "get_contact",
        1,
        dcOnGw,
      );
      assert.deepEqual([contact.isVerified, contact.address, contact.displayName], [
        true,
        dc.addr,
        "Dora",
      ]);
      const gwOnDc = (await dc.call<number[]>("get_chat_contacts", dc.accountId, dcChat))[0];
      const dcContact = await dc.call<{ isVerified: boolean; address: string }>(
        "get_contact",
        dc.accountId,
        gwOnDc,
      );
      assert.deepEqual([dcContact.isVerified, dcContact.address], [true, gw.addr]);

      // (c) text gateway → Delta Chat: right text, sender and chat, with a padlock.
      let from = dc.events.length;
      const sent = await gw.call<number>("send_msg", 1, gwChat, { text: "Hello Dora ✓\nline 2" });
      const inDc = await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 30_000, from);
      const dcMsg = await dc.call<DcMsg>("get_message", dc.accountId, inDc.event.msgId);
      assert.deepEqual([dcMsg.text, dcMsg.chatId, dcMsg.fromId, dcMsg.showPadlock], [
        "Hello Dora ✓\nline 2",
        dcChat,
        gwOnDc,
        true,
      ]);
      assert.equal(
        await gw.poll(async () => (await gwMessage(gw, sent)).state, (s) => s === 20),
        20,
        "Delta Chat sends no delivery receipt: the message stays at 20 until read",
      );

      // (e) Delta Chat reads it: its read receipt moves our message to 28 with MsgRead.
      const gwFrom = gw.events.length;
      await dc.call("markseen_msgs", dc.accountId, [inDc.event.msgId]);
      await gw.waitForEvent(
        (e) => e.event.type === "MsgRead" && e.event.msg_id === sent,
        30_000,
        gwFrom,
      );
      assert.equal((await gwMessage(gw, sent)).state, 28);

      // (c) text Delta Chat → gateway.
      let gwFrom2 = gw.events.length;
      const dcHi = await dc.call<number>("send_msg", dc.accountId, dcChat, {
        text: "Hi gateway 👋",
      });
      const inGw = await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, gwFrom2);
      const gwMsg = await gwMessage(gw, inGw.event.msg_id as number);
      assert.deepEqual(
        [gwMsg.text, gwMsg.chatId, gwMsg.fromId, gwMsg.sender.displayName, gwMsg.showPadlock],
        ["Hi gateway 👋", gwChat, dcOnGw, "Dora", true],
      );

      // (f) Delta Chat reacts to our message: IncomingReaction, no new chat message.
      const before = (await gw.call<number[]>("get_message_ids", 1, gwChat, false, false)).length;
      let gwFrom3 = gw.events.length;
      await dc.call("send_reaction", dc.accountId, inDc.event.msgId, ["👍"]);
      const reacted = await gw.waitForEvent(
        (e) => e.event.type === "IncomingReaction",
        30_000,
        gwFrom3,
      );
      assert.deepEqual(
        [
          reacted.event.msg_id,
          reacted.event.contact_id,
          reacted.event.reaction,
          reacted.event.chat_id,
        ],
        [sent, dcOnGw, "👍", gwChat],
      );
      assert.deepEqual(await gw.call("get_message_reactions", 1, sent), {
        reactionsByContact: { [String(dcOnGw)]: ["👍"] },
        reactions: [{ emoji: "👍", count: 1, isFromSelf: false }],
      });
      // (f) the gateway reacts to Delta Chat's message: Delta Chat shows it as a reaction.
      const dcFrom = dc.events.length;
      await gw.call("send_reaction", 1, inGw.event.msg_id, ["🎉"]);
      const dcReacted = await dc.waitForEvent(
        (e) => e.event.kind === "IncomingReaction",
        30_000,
        dcFrom,
      );
      assert.deepEqual([dcReacted.event.msgId, dcReacted.event.reaction], [dcHi, "🎉"]);
      assert.deepEqual(
        await dc.call("get_message_reactions", dc.accountId, dcHi),
        {
          reactionsByContact: { [String(gwOnDc)]: ["🎉"] },
          reactions: [{ emoji: "🎉", count: 1, isFromSelf: false }],
        },
      );
      // (f) a reply quoting our message: the quote is not part of the text.
      gwFrom3 = gw.events.length;
      await dc.call("send_msg", dc.accountId, dcChat, {
        text: "Replying to you",
        quotedMessageId: inDc.event.msgId,
      });
      const reply = await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, gwFrom3);
      const replyMsg = await gw.call<
        { text: string; quote: { kind: string; text: string; messageId: number }; parentId: number }
      >(
        "get_message",
        1,
        reply.event.msg_id,
      );
      assert.equal(replyMsg.text, "Replying to you");
      assert.match(replyMsg.quote.text, /^Hello Dora ✓/);
      assert.deepEqual([replyMsg.quote.kind, replyMsg.quote.messageId], ["WithMessage", sent]);
      assert.equal(replyMsg.parentId, sent);
      // (f) Delta Chat edits, then deletes for everyone, a message of its own.
      gwFrom3 = gw.events.length;
      const dcOwn = await dc.call<number>("send_msg", dc.accountId, dcChat, { text: "typo hre" });
      const own = await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, gwFrom3);
      const ownId = own.event.msg_id as number;
      gwFrom3 = gw.events.length;
      await dc.call("send_edit_request", dc.accountId, dcOwn, "typo here");
      await gw.waitForEvent(
        (e) => e.event.type === "MsgsChanged" && e.event.msg_id === ownId,
        30_000,
        gwFrom3,
      );
      const edited = await gw.call<{ text: string; isEdited: boolean }>("get_message", 1, ownId);
      assert.deepEqual([edited.text, edited.isEdited], ["typo here", true]);
      gwFrom3 = gw.events.length;
      await dc.call("delete_messages_for_all", dc.accountId, [dcOwn]);
      await gw.waitForEvent(
        (e) => e.event.type === "MsgDeleted" && e.event.msg_id === ownId,
        30_000,
        gwFrom3,
      );
      const after = await gw.call<number[]>("get_message_ids", 1, gwChat, false, false);
      assert.equal(
        after.length,
        before + 1,
        "only the reply was added; the rest acted on messages",
      );
      // (f) the gateway replies quoting Delta Chat's message: Delta Chat shows the quote.
      const dcFromQ = dc.events.length;
      await gw.call("send_msg", 1, gwChat, {
        text: "Quoting Dora",
        quotedMessageId: inGw.event.msg_id,
      });
      const quotedInDc = await dc.waitForEvent(
        (e) => e.event.kind === "IncomingMsg",
        30_000,
        dcFromQ,
      );
      const dcQuoted = await dc.call<{ text: string; quote: { text: string; messageId: number } }>(
        "get_message",
        dc.accountId,
        quotedInDc.event.msgId,
      );
      assert.deepEqual([dcQuoted.text, dcQuoted.quote.text, dcQuoted.quote.messageId], [
        "Quoting Dora",
        "Hi gateway 👋",
        dcHi,
      ]);
      // (f) the gateway edits, then deletes for everyone, a message of its own: Delta Chat follows.
      let dcFrom2 = dc.events.length;
      const gwOwn = await gw.call<number>("send_msg", 1, gwChat, { text: "gw typo" });
      const gwOwnInDc = await dc.waitForEvent(
        (e) => e.event.kind === "IncomingMsg",
        30_000,
        dcFrom2,
      );
      const dcId = gwOwnInDc.event.msgId as number;
      dcFrom2 = dc.events.length;
      await gw.call("send_edit_request", 1, gwOwn, "gw fixed");
      await dc.waitForEvent(
        (e) => e.event.kind === "MsgsChanged" && e.event.msgId === dcId,
        30_000,
        dcFrom2,
      );
      const dcEdited = await dc.call<{ text: string; isEdited: boolean }>(
        "get_message",
        dc.accountId,
        dcId,
      );
      assert.deepEqual([dcEdited.text, dcEdited.isEdited], ["gw fixed", true]);
      dcFrom2 = dc.events.length;
      await gw.call("delete_messages_for_all", 1, [gwOwn]);
      await dc.waitForEvent(
        (e) => e.event.kind === "MsgDeleted" && e.event.msgId === dcId,
        30_000,
        dcFrom2,
      );

      // (d) a file gateway → Delta Chat, bytes identical.
      const gwFiles = `${gw.dir.path}/data/files`;
      await Deno.mkdir(gwFiles, { recursive: true });
      const small = randomBytes(20_000);
      await Deno.writeFile(`${gwFiles}/report.bin`, small);
      from = dc.events.length;
      await gw.call("send_msg", 1, gwChat, {
        text: "see attachment",
        file: `${gwFiles}/report.bin`,
      });
      const fileInDc = await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 30_000, from);
      const dcFile = await dc.call<DcMsg>("get_message", dc.accountId, fileInDc.event.msgId);
      assert.deepEqual([dcFile.text, dcFile.fileName, dcFile.viewType], [
        "see attachment",
        "report.bin",
        "File",
      ]);
      assert.deepEqual(await Deno.readFile(dcFile.file!), small);

      // (d) files Delta Chat → gateway: a small one, and one over Delta Chat's pre-message
      // limit, which arrives as a pre-message (text) and a post-message (file): one message here;
      // one whose mail is over 1 MiB, which the gateway reads as a stream (Delta Chat's OpenPGP).
      for (const size of [30_000, 300_000, 1_500_000]) {
        const bytes = randomBytes(size);
        const path = `${dc.dir.path}/upload-${size}.bin`;
        await Deno.writeFile(path, bytes);
        gwFrom2 = gw.events.length;
        await dc.call("send_msg", dc.accountId, dcChat, {
          text: `file of ${size} bytes`,
          file: path,
          viewtype: "File",
        });
        const ev = await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, gwFrom2);
        const id = ev.event.msg_id as number;
        const m = await gw.poll(() => gwMessage(gw, id), (m) => m.file !== null, 30_000);
        assert.deepEqual([m.text, m.fileName, m.fileBytes, m.chatId], [
          `file of ${size} bytes`,
          `upload-${size}.bin`,
          size,
          gwChat,
        ]);
        assert.deepEqual(await Deno.readFile(m.file!), bytes, `bytes of the ${size}-byte file`);
      }

      // (g) Delta Chat turns disappearing messages on: the gateway follows, marks the notice as
      // an info message, and its reply and reaction keep the timer on (without the echo, Delta
      // Chat would read them as "timer off").
      let gwFromT = gw.events.length;
      await dc.call("set_chat_ephemeral_timer", dc.accountId, dcChat, 3600);
      await gw.waitForEvent(
        (e) => e.event.type === "ChatEphemeralTimerModified" && e.event.timer === 3600,
        30_000,
        gwFromT,
      );
      assert.equal(await gw.call("get_chat_ephemeral_timer", 1, gwChat), 3600);
      const notice = gw.events.slice(gwFromT).find((e) => e.event.type === "MsgsChanged");
      const noticeMsg = await gw.call<{ isInfo: boolean; systemMessageType: string }>(
        "get_message",
        1,
        notice!.event.msg_id,
      );
      assert.deepEqual([noticeMsg.isInfo, noticeMsg.systemMessageType], [
        true,
        "EphemeralTimerChanged",
      ]);
      // Delta Chat writes on with the timer on; the gateway's reply to that (References) would
      // turn the timer off without the echo. Delta Chat ignores a timer from a mail that is not
      // newer (Date, in seconds) than its own change, so the reply waits a moment.
      gwFromT = gw.events.length;
      await dc.call("send_msg", dc.accountId, dcChat, { text: "this will disappear" });
      await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, gwFromT);
      await new Promise((r) => setTimeout(r, 2_000));
      const dcFromT = dc.events.length;
      await gw.call("send_msg", 1, gwChat, { text: "noted" });
      await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 30_000, dcFromT);
      await gw.call("send_reaction", 1, sent, ["👌"]);
      await dc.waitForEvent(
        (e) => e.event.kind === "ReactionsChanged" || e.event.kind === "IncomingReaction",
        30_000,
        dcFromT,
      );
      assert.equal(await dc.call("get_chat_ephemeral_timer", dc.accountId, dcChat), 3600);
      gwFromT = gw.events.length;
      await dc.call("set_chat_ephemeral_timer", dc.accountId, dcChat, 0);
      await gw.waitForEvent(
        (e) => e.event.type === "ChatEphemeralTimerModified" && e.event.timer === 0,
        30_000,
        gwFromT,
      );
    } catch (err) {
      await dumpOnFailure(relay, gw, dc, err);
    }
  },
});

Deno.test({
  name: "the gateway joins Delta Chat's https invite; both verified; text both ways",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using gw = await GatewayPeer.start("Edge GW", relay);
    await using dc = await DeltaChatPeer.start("dcpeer", relay, { displayName: "Dora" });
    try {
      // (b) Delta Chat's own invite form is https://i.delta.chat/#FPR&v=3&i=…&s=…&a=…&n=…
      const link = await dc.call<string>("get_chat_securejoin_qr_code", dc.accountId, null);
      assert.match(link, /^https:\/\/i\.delta\.chat\/#/);
      const gwChat = await gw.call<number>("secure_join", 1, link);
      const joined = await gw.waitForEvent((e) =>
        e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000
      );
      assert.ok(
        gw.events.some((e) =>
          e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 400
        ),
      );
      const progress = await dc.waitForEvent((e) =>
        e.event.kind === "SecurejoinInviterProgress" && e.event.progress === 1000
      );
      const dcChat = progress.event.chatId as number;
      const dcOnGw = joined.event.contact_id as number;
      const c = await gw.call<{ isVerified: boolean; address: string }>("get_contact", 1, dcOnGw);
      assert.deepEqual([c.isVerified, c.address], [true, dc.addr]);
      const gwOnDc = await dc.call<{ isVerified: boolean; address: string }>(
        "get_contact",
        dc.accountId,
        progress.event.contactId,
      );
      assert.deepEqual([gwOnDc.isVerified, gwOnDc.address], [true, gw.addr]);

      const gwFrom = gw.events.length;
      await dc.call("send_msg", dc.accountId, dcChat, { text: "welcome, gateway" });
      const inGw = await gw.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, gwFrom);
      const m = await gwMessage(gw, inGw.event.msg_id as number);
      assert.deepEqual([m.text, m.chatId], ["welcome, gateway", gwChat]);

      const from = dc.events.length;
      await gw.call("send_msg", 1, gwChat, { text: "thanks, Dora" });
      const inDc = await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 30_000, from);
      const d = await dc.call<DcMsg>("get_message", dc.accountId, inDc.event.msgId);
      assert.deepEqual([d.text, d.chatId, d.showPadlock], ["thanks, Dora", dcChat, true]);
    } catch (err) {
      await dumpOnFailure(relay, gw, dc, err);
    }
  },
});
