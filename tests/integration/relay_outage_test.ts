/**
 * Relay outage during a burst of sends: with Postfix and Dovecot stopped, gateway A still answers
 * 30 `send_msg` calls at once (ids, state 10, queued in its outbox); once the relay is back, all
 * 30 reach B exactly once and end at state 26 on A (B's delivery receipts). Prints how long the
 * drain took after the relay returned (the SMTP loop's connection back-off reaches 30 s). And a
 * daemon stopped with mail still queued sends it after its restart.
 */
import assert from "node:assert/strict";
import { chatMessages, joinBySecureJoin, messagesById } from "../_helpers/gateway_pair.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

const TOTAL = 30;

twoGatewaysTest({
  name: "relay stopped during a burst of 30 sends: all delivered once after it returns, state 26",
  async fn({ relay, a, b }) {
    try {
      const pair = await joinBySecureJoin(a, b);
      await relay.stopMail();
      const stoppedAt = performance.now();

      // Every send answers at once with an id; the message waits in the outbox at state 10.
      const texts = Array.from({ length: TOTAL }, (_, i) => `outage-${String(i).padStart(2, "0")}`);
      const ids: number[] = [];
      for (const text of texts) {
        ids.push(await a.call<number>("send_msg", 1, pair.inviterChat, { text }));
      }
      assert.equal(new Set(ids).size, TOTAL);
      const queued = await messagesById(a, ids);
      assert.deepEqual(queued.map((m) => m.state), ids.map(() => 10));
      assert.deepEqual(queued.map((m) => m.text), texts);

      // A couple of seconds without the relay: nothing fails, nothing leaves.
      await new Promise((r) => setTimeout(r, 2_500));
      const waiting = await messagesById(a, ids);
      assert.deepEqual(waiting.map((m) => m.state), ids.map(() => 10), "still pending, not failed");

      await relay.startMail();
      const back = performance.now();
      const onB = await b.poll(
        () => chatMessages(b, pair.joinerChat),
        (msgs) => msgs.filter((m) => m.text.startsWith("outage-")).length >= TOTAL,
        90_000,
      );
      const arrivedMs = Math.round(performance.now() - back);
      const delivered = await a.poll(
        () => messagesById(a, ids),
        (msgs) => msgs.every((m) => m.state === 26),
        60_000,
      );
      const deliveredMs = Math.round(performance.now() - back);
      await new Promise((r) => setTimeout(r, 1_000)); // a duplicate would show up by now
      const settled = (await chatMessages(b, pair.joinerChat)).filter((m) =>
        m.text.startsWith("outage-")
      );
      console.log(
        `relay down ${Math.round(back - stoppedAt)} ms; after startMail: all ${TOTAL} on B in ` +
          `${arrivedMs} ms, all at state 26 on A in ${deliveredMs} ms`,
      );
      assert.ok(onB.length >= TOTAL);
      assert.deepEqual(settled.map((m) => m.text).toSorted(), texts, "each text exactly once");
      assert.ok(settled.every((m) => m.fromId === pair.inviterOnJoiner));
      assert.deepEqual(delivered.map((m) => m.state), ids.map(() => 26));
    } catch (err) {
      console.error(`--- A ---\n${a.daemon.output().slice(-6000)}`);
      console.error(`--- B ---\n${b.daemon.output().slice(-4000)}`);
      throw err;
    }
  },
});

twoGatewaysTest({
  name:
    "a daemon restarted with a full outbox sends it: queued while the relay was down, then stopped",
  gateways: [{ name: "A", keepData: true }],
  async fn(gws) {
    const { relay, b } = gws;
    let a = gws.a;
    try {
      const pair = await joinBySecureJoin(a, b);
      await relay.stopMail();
      const texts = ["queued-1", "queued-2", "queued-3", "queued-4", "queued-5"];
      const ids: number[] = [];
      for (const text of texts) {
        ids.push(await a.call<number>("send_msg", 1, pair.inviterChat, { text }));
      }
      assert.equal((await a.call<Record<string, string>>("get_info", 1)).outbox_len, "5");
      await a.stop(); // SIGTERM with five mails queued; the data dir is kept
      await relay.startMail();
      a = await gws.restart("a");
      const onB = await b.poll(
        () => chatMessages(b, pair.joinerChat),
        (msgs) => msgs.filter((m) => m.text.startsWith("queued-")).length >= texts.length,
        60_000,
      );
      assert.deepEqual(
        onB.filter((m) => m.text.startsWith("queued-")).map((m) => m.text).toSorted(),
        texts,
      );
      const states = await a.poll(
        () => messagesById(a, ids),
        (msgs) => msgs.every((m) => m.state === 26),
        60_000,
      );
      assert.deepEqual(states.map((m) => m.state), ids.map(() => 26));
    } catch (err) {
      console.error(`--- A ---\n${a.daemon.output().slice(-6000)}`);
      throw err;
    }
  },
});
