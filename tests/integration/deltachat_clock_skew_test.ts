/**
 * Issue 21 end to end with Delta Chat 2.57: a gateway whose clock runs ahead (+30 s, +2 days) or
 * behind (−30 s, −2 days) a real Delta Chat core on the right time; every message in both
 * directions arrives exactly once.
 */
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { deltaChatSide, ExactlyOnce, gatewaySide } from "../_helpers/exactly_once.ts";
import { FakeClock, faketimeInstalled, startFieldRelay } from "../_helpers/faketime.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { dcSecureJoin } from "../_helpers/mixed_peers.ts";
import { NO_RELAY } from "../_helpers/relay.ts";

Deno.test({
  name: "a gateway ahead of and behind Delta Chat's clock: messages both ways arrive exactly once",
  ignore: NO_RELAY || !faketimeInstalled() || !deltaChatInstalled(),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using relay = await startFieldRelay();
    // First booted 3 days behind, as a box up before NTP (it makes its key then), and set right
    // before the join.
    await using clock = await FakeClock.create("-3d");
    await using gw = await GatewayPeer.start("Skewed GW", relay, { env: clock.env });
    await clock.set("+0");
    await using dc = await DeltaChatPeer.start("dcpeer", relay, { displayName: "Dora" });

    const from = gw.events.length;
    const dcChat = await dcSecureJoin(
      dc,
      await gw.call<string>("get_chat_securejoin_qr_code", 1, null),
    );
    const joined = await gw.waitForEvent(
      (e) => e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000,
      60_000,
      from,
    );
    const G = gatewaySide(gw, joined.event.chat_id as number);
    const D = deltaChatSide(dc, dcChat, "Delta Chat");

    for (const offset of ["+30s", "+2d", "-30s", "-2d"]) {
      const how = offset.startsWith("+") ? "ahead" : "behind";
      await t.step(
        `gateway ${offset} (${how}): messages both ways arrive exactly once`,
        async () => {
          await clock.set(offset);
          try {
            const x = await ExactlyOnce.begin(G, D);
            for (const i of [1, 2]) {
              await x.send(G, D, `gateway ${offset} → Delta Chat #${i}`);
              await x.send(D, G, `Delta Chat → gateway ${offset} #${i}`);
            }
            await x.verify();
          } finally {
            await clock.set("+0");
          }
        },
      );
    }
  },
});
