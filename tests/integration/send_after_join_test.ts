/**
 * Two gateways through the filtered relay: a message sent right after `secure_join`, before the
 * handshake has given the joiner the inviter's key, waits (state 10) and is delivered once the
 * join completes, instead of failing with "has no encryption key".
 */
import assert from "node:assert/strict";
import { chatMessages, messagesById } from "../_helpers/gateway_pair.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

twoGatewaysTest({
  name: "send_msg right after secure_join waits for the join, then reaches the inviter",
  gateways: ["Alice GW", "Bob GW"],
  async fn({ a: alice, b: bob }) {
    try {
      const link = await alice.call<string>("get_chat_securejoin_qr_code", 1, null);
      const bobChat = await bob.call<number>("secure_join", 1, link);
      const first = await bob.call<number>("send_msg", 1, bobChat, { text: "hello, joiner here" });
      const second = await bob.call<number>("send_msg", 1, bobChat, { text: "second one" });
      const early = await messagesById(bob, [first, second]);
      assert.deepEqual(early.map((m) => m.state), [10, 10], "pending while the join runs");

      await bob.waitForEvent((e) =>
        e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000
      );
      for (const msgId of [first, second]) {
        await bob.waitForEvent((e) => e.event.type === "MsgDelivered" && e.event.msg_id === msgId);
      }
      const aliceChat = (await alice.waitForEvent((e) =>
        e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000
      )).event.chat_id as number;
      const got = await alice.poll(
        () =>
          chatMessages(alice, aliceChat),
        (ms) => ms.filter((m) => m.fromId !== 1).length >= 2,
      );
      assert.deepEqual(
        got.filter((m) => m.fromId !== 1).map((m) => m.text).sort(),
        ["hello, joiner here", "second one"],
      );
      const after = await messagesById(bob, [first, second]);
      assert.ok(after.every((m) => m.state >= 20), `delivered: ${JSON.stringify(after)}`);
    } catch (err) {
      console.error(`--- alice ---\n${alice.daemon.output().slice(-5000)}`);
      console.error(`--- bob ---\n${bob.daemon.output().slice(-5000)}`);
      throw err;
    }
  },
});
