/**
 * The SMTP outbox on a full disk (issue 18 §3): B queues mail while the relay is down, then B's
 * disk (a small tmpfs) is filled and the relay comes back. B sends every queued mail although it
 * cannot record that it did; it does not send any of them again (A's log shows no duplicate), and
 * once the filler is deleted (no restart) every message on B moves on from state 10.
 */
import assert from "node:assert/strict";
import { chatMessages, joinBySecureJoin, messagesById } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { startRelay } from "../_helpers/relay.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";

const TOTAL = 8;

Deno.test({
  name:
    "disk full while the outbox sends: each mail sent once, states recorded after space returns",
  ignore: NO_TMPFS,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using relay = await startRelay();
    await using fs = await mountTmpfs("disk-full-outbox", "32m");
    const filler = `${fs.path}/filler`;
    let a: GatewayPeer | undefined;
    let b: GatewayPeer | undefined;
    try {
      a = await GatewayPeer.start("A", relay);
      b = await GatewayPeer.start("B", relay, { dataDir: `${fs.path}/data` });
      const pair = await joinBySecureJoin(a, b);
      const aLogFrom = a.daemon.output().length;
      await relay.stopMail();
      const texts = Array.from({ length: TOTAL }, (_, i) => `o-${String(i).padStart(2, "0")}`);
      const ids: number[] = [];
      for (const text of texts) {
        ids.push(await b.call<number>("send_msg", 1, pair.joinerChat, { text }));
      }
      fillDisk(filler);
      await relay.startMail();

      const received = () => chatMessages(a!, pair.inviterChat);
      await a.poll(received, (m) => texts.every((t) => m.some((x) => x.text === t)), 90_000);
      // B could not record any of it: its rows stay, and none is sent again meanwhile.
      await new Promise((r) => setTimeout(r, 5_000));
      assert.ok(
        (await messagesById(b, ids)).some((m) => m.state === 10),
        "the disk was full when the outcomes were written",
      );
      assert.match(b.daemon.output(), /outbox update failed; the mail is not sent again/);

      await Deno.remove(filler);
      await b.poll(
        () => messagesById(b!, ids),
        (ms) => ms.every((m) => m.state >= 20),
        60_000,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      const got = (await received()).filter((m) => texts.includes(m.text));
      assert.equal(new Set(got.map((m) => m.id)).size, got.length, "each message id once");
      for (const t of texts) {
        assert.equal(got.filter((m) => m.text === t).length, 1, `${t} exactly once`);
      }
      const aLog = a.daemon.output().slice(aLogFrom);
      assert.doesNotMatch(aLog, /stored="?duplicate/, "B sent no mail twice");
    } finally {
      await b?.stop();
      await a?.stop();
    }
  },
});
