/**
 * An inbox flooded with ten ~25 MB mails (random junk, noise where the ciphertext should be, and
 * valid-but-huge mails from a stranger) that land in INBOX at once, between real messages from
 * the verified contact A: B drains everything on one IMAP connection (no reconnect), every real
 * message arrives, each huge mail is handled exactly once (recorded as a receive error, or stored
 * once) and INBOX ends empty; B's log holds only log records, one INFO line per mail, no
 * content. (On a slow link such a batch, fetched at once, outlasted the heartbeat and was fetched
 * again forever; tests/transport/inbox_drain_test.ts reproduces that link with a throttled
 * proxy. Here, on loopback, the old code drained too, but held every body at once: peak RSS
 * ~1 GB. The figures of this run are printed; `deno task bench` records them.)
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { chatMessages, joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { readReceiveErrors, readStoredAccount } from "../_helpers/gateway_store.ts";
import { FLOOD_KINDS, FLOOD_MAIL_BYTES, HugeMailFactory } from "../_helpers/huge_mail.ts";
import { mailProcessedLines, strayLines } from "../_helpers/log_lines.ts";
import { rssMb } from "../_helpers/rss.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";
import { closeMailbox, openMailbox } from "../_helpers/relay_mailbox.ts";

twoGatewaysTest({
  name: "ten 25 MB mails in INBOX at once: drained on one connection, every real message arrives",
  async fn({ relay, a, b }) {
    const bData = `${b.dir.path}/data`;
    try {
      const pair = await joinBySecureJoin(a, b);
      const bAcc = readStoredAccount(bData);
      const factory = await HugeMailFactory.create(bAcc, `stranger@${relay.domain}`);
      const huge = [];
      for (const kind of FLOOD_KINDS) huge.push(await factory.build(kind, FLOOD_MAIL_BYTES));
      for (const m of huge) assert.ok(m.raw.length > 24 * 1024 * 1024, `${m.kind} is too small`);

      // The huge mails wait in a folder B does not watch, then move into INBOX in one command.
      const imap = await openMailbox(relay, bAcc);
      try {
        await imap.mailboxCreate("Staging").catch(() => undefined);
        for (const m of huge) assert.ok(await imap.append("Staging", Buffer.from(m.raw)));
        const errorsBefore = readReceiveErrors(bData).length;
        const eventsFrom = b.events.length;
        const rssBefore = await rssMb(b.daemon.pid);

        const good: string[] = [];
        const send = async (text: string) => {
          good.push(text);
          await a.call<number>("send_msg", 1, pair.inviterChat, { text });
        };
        for (let i = 0; i < 5; i++) await send(`real-before-${i}`);
        await imap.mailboxOpen("Staging");
        await imap.messageMove("1:*", "INBOX");
        for (let i = 0; i < 25; i++) await send(`real-after-${i}`);

        const onB = await b.poll(
          () => chatMessages(b, pair.joinerChat),
          (msgs) => good.every((t) => msgs.some((m) => m.text === t)),
          180_000,
        );
        const missing = good.filter((t) => !onB.some((m) => m.text === t));
        assert.deepEqual(missing, [], "every real message arrives");
        assert.equal(
          onB.filter((m) => m.fromId > 9).length,
          good.length,
          "each real message once",
        );

        const inboxCount = async () => {
          const st = await imap.status("INBOX", { messages: true });
          return st === false ? -1 : st.messages ?? -1;
        };
        assert.equal(await b.poll(inboxCount, (n) => n === 0, 120_000), 0, "INBOX ends empty");

        // Each huge mail handled once: junk recorded once, valid ones stored once.
        const errors = readReceiveErrors(bData).slice(errorsBefore);
        for (const m of huge.filter((m) => m.kind !== "valid")) {
          const n = errors.filter((e) => e.messageId === m.messageId).length;
          assert.equal(n, 1, `${m.kind} ${m.messageId} recorded ${n} times`);
        }
        const chats = await b.call<number[]>("get_chatlist_entries", 1, null, null, null);
        const texts: string[] = [];
        for (const chat of chats.filter((c) => c !== pair.joinerChat)) {
          for (const m of await chatMessages(b, chat)) if (m.fromId > 9) texts.push(m.text);
        }
        const valid = huge.filter((m) => m.kind === "valid").length;
        assert.equal(texts.length, valid, "each valid huge mail stored once");

        // One connection throughout: the flood never cost B its IMAP session.
        const reconnects = b.events.slice(eventsFrom).filter((e) =>
          e.event.type === "ImapConnected"
        );
        assert.equal(reconnects.length, 0, "no IMAP reconnect during the flood");
        // The log: only log records; one INFO line per mail, ids and sizes, no content.
        const output = b.daemon.output();
        assert.deepEqual(strayLines(output), [], "no stray unprefixed lines");
        const processed = mailProcessedLines(output);
        const uids = processed.map((p) => p.uid);
        assert.equal(new Set(uids).size, uids.length, "one line per mail");
        assert.ok(processed.length >= good.length + huge.length);
        for (const text of good) {
          assert.ok(!output.includes(text), `"${text}" in the log`);
        }
        const rssAfter = await rssMb(b.daemon.pid);
        console.log(
          `B RSS: ${rssBefore.now} MB before, peak ${rssAfter.peak} MB, ${rssAfter.now} MB after`,
        );
      } finally {
        await closeMailbox(imap);
      }
    } catch (err) {
      console.error(`--- B ---\n${b.daemon.output().slice(-8000)}`);
      throw err;
    }
  },
});
