/**
 * Two real Delta Chat cores through the project's relay with its chatmail acceptance filter on:
 * proves the harness, the relay and the filter carry real Delta Chat traffic (SecureJoin v3,
 * an encrypted text) before the gateway's own interop tests build on them.
 */
import assert from "node:assert/strict";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";

Deno.test({
  name: "two Delta Chat cores join by invite and exchange an encrypted text through the relay",
  ignore: NO_RELAY || !deltaChatInstalled(),
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using alice = await DeltaChatPeer.start("alice", relay);
    await using bob = await DeltaChatPeer.start("bob", relay);
    const link = await alice.call<string>("get_chat_securejoin_qr_code", alice.accountId, null);
    assert.match(link, /^https:\/\/i\.delta\.chat\/#[0-9A-F]{40}&/);
    const chatOnBob = await bob.call<number>("secure_join", bob.accountId, link);
    await bob.waitForEvent((e) =>
      e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 1000
    );
    await alice.waitForEvent((e) =>
      e.event.kind === "SecurejoinInviterProgress" && e.event.progress === 1000
    );

    const from = alice.events.length;
    await bob.call("send_msg", bob.accountId, chatOnBob, { text: "hello through the filter ✓" });
    const incoming = await alice.waitForEvent((e) => e.event.kind === "IncomingMsg", 30_000, from);
    const msg = await alice.call<{ text: string; showPadlock: boolean }>(
      "get_message",
      alice.accountId,
      incoming.event.msgId,
    );
    assert.equal(msg.text, "hello through the filter ✓");
    assert.equal(msg.showPadlock, true);
  },
});
