/**
 * Two gateways through the filtered relay: SecureJoin by invite link (both verified, 1:1 chat on
 * both), text both ways, delivery receipts (state 26), read receipts (28, MsgRead), and a file
 * with identical bytes. Every mail passes the relay's chatmail acceptance filter.
 */
import assert from "node:assert/strict";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

interface Msg {
  id: number;
  chatId: number;
  text: string;
  state: number;
  fromId: number;
  file: string | null;
  fileName: string | null;
  viewtype: string;
  sender: { displayName: string; address: string };
}

twoGatewaysTest({
  name: "two gateways join by invite, exchange text and a file, and see states 20, 26 and 28",
  gateways: ["Alice GW", "Bob GW"],
  async fn({ a: alice, b: bob }) {
    try {
      const link = await alice.call<string>("get_chat_securejoin_qr_code", 1, null);
      assert.match(link, /^OPENPGP4FPR:[0-9A-F]{40}#a=[^&]+&n=Alice\+GW&i=[\w-]{24}&s=[\w-]{24}$/);
      const second = await alice.call<string>("get_chat_securejoin_qr_code", 1, null);
      assert.notEqual(second.split("&s=")[1], link.split("&s=")[1], "a new auth token per invite");

      const bobChat = await bob.call<number>("secure_join", 1, link);
      assert.ok(bobChat >= 10);
      const inviter = await alice.waitForEvent((e) =>
        e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000
      );
      await bob.waitForEvent((e) =>
        e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 400
      );
      const joined = await bob.waitForEvent((e) =>
        e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000
      );
      const aliceChat = inviter.event.chat_id as number;
      const bobOnAlice = inviter.event.contact_id as number;
      const aliceOnBob = joined.event.contact_id as number;
      assert.equal(inviter.event.chat_type, 100);
      const c1 = await alice.call<{ isVerified: boolean; address: string }>(
        "get_contact",
        1,
        bobOnAlice,
      );
      const c2 = await bob.call<{ isVerified: boolean; address: string }>(
        "get_contact",
        1,
        aliceOnBob,
      );
      assert.deepEqual([c1.isVerified, c1.address], [true, bob.addr]);
      assert.deepEqual([c2.isVerified, c2.address], [true, alice.addr]);
      const members = await alice.call<number[]>("get_chat_contacts", 1, aliceChat);
      assert.deepEqual(members.toSorted((a, b) => a - b), [1, bobOnAlice]);

      // Text Alice → Bob: 10 at once, 20 when the relay took it, 26 when Bob's gateway stored it.
      const from = bob.events.length;
      const sent = await alice.call<number>("send_msg", 1, aliceChat, { text: "Hello Bob ✓" });
      const incoming = await bob.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, from);
      assert.equal(incoming.event.chat_id, bobChat);
      const got = (await bob.call<Record<string, Msg>>("get_messages", 1, [
        incoming.event.msg_id,
      ]))[String(incoming.event.msg_id)];
      assert.deepEqual([got.text, got.fromId, got.sender.displayName, got.state], [
        "Hello Bob ✓",
        aliceOnBob,
        "Alice GW",
        1,
      ]);
      await alice.waitForEvent((e) =>
        e.event.type === "MsgDelivered" && e.event.msg_id === sent &&
        alice.events.filter((x) => x.event.type === "MsgDelivered" && x.event.msg_id === sent)
            .length === 2
      );
      const state = async () =>
        (await alice.call<Record<string, Msg>>("get_messages", 1, [sent]))[String(sent)].state;
      assert.equal(await alice.poll(state, (s) => s === 26), 26);

      // Bob reads it: Alice sees 28 and MsgRead; Bob's message is 16 and fresh count 0.
      await bob.call("markseen_msgs", 1, [incoming.event.msg_id]);
      await alice.waitForEvent((e) => e.event.type === "MsgRead" && e.event.msg_id === sent);
      assert.equal(await state(), 28);
      assert.deepEqual(await bob.call("get_fresh_msgs", 1), []);

      // A file Bob → Alice, bytes identical; the caller's file stays where it was. The daemon
      // may read only its data and files directories (the production permission set).
      const bytes = crypto.getRandomValues(new Uint8Array(50_000));
      const path = `${bob.dir.path}/data/files/report.bin`;
      await Deno.mkdir(`${bob.dir.path}/data/files`, { recursive: true });
      await Deno.writeFile(path, bytes);
      const fromA = alice.events.length;
      await bob.call("send_msg", 1, bobChat, { text: "see attachment", file: path });
      const fileMsg = await alice.waitForEvent(
        (e) => e.event.type === "IncomingMsg",
        30_000,
        fromA,
      );
      const fm = (await alice.call<Record<string, Msg>>("get_messages", 1, [
        fileMsg.event.msg_id,
      ]))[String(fileMsg.event.msg_id)];
      assert.deepEqual([fm.text, fm.fileName, fm.viewtype, fm.chatId], [
        "see attachment",
        "report.bin",
        "File",
        aliceChat,
      ]);
      assert.deepEqual(await Deno.readFile(fm.file!), bytes);
      assert.deepEqual(await Deno.readFile(path), bytes);

      // The file rules in the daemon as shipped: Deno's read permission follows the given path,
      // so a link inside the files directory would reach /etc/shadow or the database; every such
      // send is -1 naming the rule and stores nothing.
      const files = `${bob.dir.path}/data/files`;
      await Deno.symlink("/etc/shadow", `${files}/shadow`);
      await Deno.symlink("/etc", `${files}/etc`);
      await Deno.symlink(`${bob.dir.path}/data/accounts/1/gateway.db`, `${files}/db`);
      await Deno.link(path, `${files}/report-link.bin`);
      const fifo = await new Deno.Command("mkfifo", { args: [`${files}/pipe`] }).output();
      assert.equal(fifo.code, 0);
      const idsBefore = await bob.call<number[]>("get_message_ids", 1, bobChat, false, false);
      const refusals: [string, RegExp][] = [
        [`${files}/shadow`, /leads outside the files directory/],
        [`${files}/etc/passwd`, /leads outside the files directory/],
        [`${files}/db`, /leads to the gateway's own state/],
        [`${bob.dir.path}/data/accounts/1/gateway.db`, /is the gateway's own state/],
        ["/etc/machine-id", /is the device identity/],
        [`${files}/report-link.bin`, /has 2 hard links/],
        [`${files}/pipe`, /is a FIFO/],
      ];
      for (const [file, rule] of refusals) {
        await assert.rejects(bob.call("send_msg", 1, bobChat, { file }), (e: Error) => {
          assert.equal((e as Error & { code: number }).code, -1, e.message);
          assert.match(e.message, rule);
          return true;
        });
      }
      assert.deepEqual(
        await bob.call<number[]>("get_message_ids", 1, bobChat, false, false),
        idsBefore,
        "nothing stored",
      );
    } catch (err) {
      console.error(`--- alice ---\n${alice.daemon.output().slice(-5000)}`);
      console.error(`--- bob ---\n${bob.daemon.output().slice(-5000)}`);
      throw err;
    }
  },
});
