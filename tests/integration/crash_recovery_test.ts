/**
 * Crash recovery of the reception pipeline: gateway A sends a burst of 300 texts to gateway B
 * (joined by SecureJoin, through the filtered relay) while B's daemon is killed with SIGKILL at
 * random moments of the reception and restarted on the same data directory. After the last
 * restart every text is in B's chat exactly once (a mail is deleted from IMAP only after its
 * commit; one re-fetched after a kill is a Message-ID duplicate), nothing B had stored before a
 * kill is lost, and A's outbox drained (every message at state ≥ 20, none failed).
 */
import assert from "node:assert/strict";
import {
  chatMessages,
  type ChatMsg,
  joinBySecureJoin,
  mapLimit,
  messagesById,
} from "../_helpers/gateway_pair.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

const TOTAL = 300;
const KILLS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

twoGatewaysTest({
  name: "SIGKILL of the receiving gateway during a burst of 300: after restart each text once",
  gateways: ["A", { name: "B", keepData: true }],
  async fn(gws) {
    const { a } = gws;
    let b = gws.b;
    const outputs: string[] = [];
    try {
      const pair = await joinBySecureJoin(a, b);
      const bChat = pair.joinerChat;
      const texts = Array.from({ length: TOTAL }, (_, i) => `m-${String(i).padStart(3, "0")}`);
      const t0 = performance.now();
      const sending = mapLimit(
        texts,
        4,
        (text) => a.call<number>("send_msg", 1, pair.inviterChat, { text }),
      );
      const count = async () => (await chatMessages(b, bChat)).length;

      const kills: string[] = [];
      for (let k = 0; k < KILLS; k++) {
        // Kill during reception: once B has stored more since its (re)start, after a random pause.
        const base = await count();
        const grown = await b.poll(count, (n) => n > base || n >= TOTAL, 60_000);
        if (grown >= TOTAL) {
          kills.push(`kill ${k + 1} skipped: B already had all ${TOTAL}`);
          break;
        }
        const delay = 100 + Math.floor(Math.random() * 1400);
        await sleep(delay);
        const before = await chatMessages(b, bChat);
        const code = await b.daemon.stop("SIGKILL");
        outputs.push(b.daemon.output());
        await b.stop(); // the daemon is gone; this only ends the SSE reader and the temp dir
        const t = Math.round(performance.now() - t0);
        b = await gws.restart("b");
        const after = await chatMessages(b, bChat);
        kills.push(
          `kill ${k + 1} at +${t} ms (pause ${delay} ms, exit ${code}): ` +
            `${before.length} stored before, ${after.length} after restart`,
        );
        // What B had committed before the kill survives it.
        const afterTexts = new Set(after.map((m) => m.text));
        assert.deepEqual(before.filter((m) => !afterTexts.has(m.text)), []);
      }
      const ids = await sending;
      const sentAt = Math.round(performance.now() - t0);

      const final = await b.poll(
        () => chatMessages(b, bChat),
        (msgs) => msgs.length >= TOTAL,
        90_000,
      );
      const receivedAt = Math.round(performance.now() - t0);
      // Give a straggler (a duplicate) a moment to show up before counting.
      await sleep(1_000);
      const settled = await chatMessages(b, bChat);
      const counts = new Map<string, number>();
      for (const m of settled) counts.set(m.text, (counts.get(m.text) ?? 0) + 1);
      const dups = [...counts].filter(([, n]) => n > 1);
      const missing = texts.filter((t) => !counts.has(t));
      assert.deepEqual(dups, [], "no text twice");
      assert.deepEqual(missing, [], "no text missing");
      assert.equal(settled.length, TOTAL);
      assert.deepEqual(settled.map((m) => m.text).toSorted(), texts);
      assert.equal(final.length, TOTAL);
      assert.ok(settled.every((m) => m.fromId === pair.inviterOnJoiner && m.chatId === bChat));

      // A's outbox drained and every delivery receipt arrived, crashes or not: B stores the
      // receipts it owes in the same transaction as the message, so all 300 reach 26.
      const states = await a.poll(
        () => messagesById(a, ids),
        (msgs) => msgs.every((m) => m.state === 26),
        60_000,
      );
      const byState = new Map<number, number>();
      for (const m of states) byState.set(m.state, (byState.get(m.state) ?? 0) + 1);
      assert.deepEqual(states.filter((m: ChatMsg) => m.state !== 26), []);
      console.log(
        `${kills.join("\n")}\nall ${TOTAL} sent by A at +${sentAt} ms, all received by B at ` +
          `+${receivedAt} ms; A states: ${JSON.stringify(Object.fromEntries(byState))}`,
      );
    } catch (err) {
      console.error(`--- A ---\n${a.daemon.output().slice(-5000)}`);
      for (const o of outputs) console.error(`--- killed B ---\n${o.slice(-3000)}`);
      console.error(`--- B ---\n${b.daemon.output().slice(-5000)}`);
      throw err;
    }
  },
});
