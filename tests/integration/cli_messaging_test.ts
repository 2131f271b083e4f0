/**
 * The CLI as a thin client of two real gateways: `invite` on one, `join` on the other, `send`,
 * `messages` with the state symbols, `read`, `contacts` and `chats`, each as a subprocess with
 * the CLI's own narrow permissions.
 */
import assert from "node:assert/strict";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { runCli } from "../cli/fixtures/run_cli.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

async function cli(gw: GatewayPeer, ...args: string[]): Promise<string> {
  const run = await runCli([...args, "--url", gw.daemon.url]);
  assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

twoGatewaysTest({
  name:
    "CLI invite, join, send, messages (state symbols), read, contacts and chats on real gateways",
  gateways: ["Alice", "Bob"],
  async fn({ a: alice, b: bob }) {
    const link = (await cli(alice, "invite")).trim();
    assert.match(link, /^OPENPGP4FPR:/);
    const bobChat = Number(/^chat (\d+)$/m.exec(await cli(bob, "join", link))?.[1]);
    assert.ok(bobChat >= 10);
    const done = await alice.waitForEvent((e) =>
      e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000
    );
    await bob.waitForEvent((e) =>
      e.event.type === "SecurejoinJoinerProgress" && e.event.progress === 1000
    );
    const aliceChat = done.event.chat_id as number;
    assert.match(await cli(alice, "contacts"), new RegExp(bob.addr.replace(/\./g, "\\.")));

    const from = bob.events.length;
    const sent = await cli(alice, "send", String(aliceChat), "hello from the CLI");
    const id = Number(/^message (\d+)$/m.exec(sent)?.[1]);
    const incoming = await bob.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, from);
    assert.match(await cli(bob, "messages", String(bobChat)), /hello from the CLI/);
    assert.match(await cli(bob, "chats"), /Alice/);
    await alice.waitForEvent((e) =>
      e.event.type === "MsgDelivered" &&
      alice.events.filter((x) => x.event.type === "MsgDelivered" && x.event.msg_id === id)
          .length === 2
    );
    assert.match(await cli(alice, "messages", String(aliceChat)), /✓✓/);
    await cli(bob, "read", String(incoming.event.msg_id));
    await alice.waitForEvent((e) => e.event.type === "MsgRead" && e.event.msg_id === id);
    assert.match(await cli(alice, "messages", String(aliceChat)), /👁/);
  },
});
