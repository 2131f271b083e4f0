/**
 * Hostile mail straight into a gateway's INBOX (IMAP APPEND with the account's own login, so the
 * relay's filter is bypassed): broken MIME, bad armor, forged, missing or foreign signatures,
 * plaintext claiming a verified contact, a zip bomb, oversized headers and forged SecureJoin
 * steps (tests/_helpers/hostile_corpus.ts), interleaved with real messages from the verified
 * contact A (and one validly signed mail of A's appended twice: stored once). B stays up, every real message arrives, no bad mail becomes a message, no contact
 * besides A is verified, the bad mails are recorded as receive errors and INBOX ends empty.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { chatMessages, joinBySecureJoin, messagesById } from "../_helpers/gateway_pair.ts";
import { readReceiveErrors, readStoredAccount } from "../_helpers/gateway_store.ts";
import { buildHostileCorpus, type HostileMail } from "../_helpers/hostile_corpus.ts";
import { mailProcessedLines, strayLines } from "../_helpers/log_lines.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";
import { signedChatMail } from "../_helpers/signed_mail.ts";
import { closeMailbox, openMailbox } from "../_helpers/relay_mailbox.ts";

twoGatewaysTest({
  name: "hostile mail in INBOX is recorded and deleted; A's messages arrive; nothing else verified",
  async fn({ relay, a, b }) {
    const bData = `${b.dir.path}/data`;
    try {
      const pair = await joinBySecureJoin(a, b);
      // B made an invite too, so a forged vc-request-with-auth meets real tokens.
      const link = await b.call<string>("get_chat_securejoin_qr_code", 1, null);
      const param = (k: string) =>
        decodeURIComponent(new RegExp(`[#&]${k}=([^&]+)`).exec(link)![1]);
      const aAcc = readStoredAccount(`${a.dir.path}/data`);
      const bAcc = readStoredAccount(bData);
      assert.equal(bAcc.addr, b.addr);
      const t0 = performance.now();
      const corpus = await buildHostileCorpus({
        a: aAcc,
        b: bAcc,
        inviteNumber: param("i"),
        auth: param("s"),
        domain: relay.domain,
      });
      const built = Math.round(performance.now() - t0);
      const bomb = corpus.find((m) => m.name.startsWith("zip bomb"))!;
      assert.ok(bomb.raw.length < 1024 * 1024, `zip bomb is ${bomb.raw.length} bytes on the wire`);
      // A replayed mail: validly signed by A, appended twice with the same Message-ID.
      const replayId = `<replay-${crypto.randomUUID()}@test.invalid>`;
      const replayText = "good 0: replayed, shown once";
      const replay = await signedChatMail({
        from: aAcc.addr,
        fromName: "A",
        to: bAcc,
        signer: aAcc,
        messageId: replayId,
        date: new Date(),
        subject: "Message from A",
        text: replayText,
      });
      const errorsBefore = readReceiveErrors(bData).length;
      const incomingFrom = b.events.length;

      const imap = await openMailbox(relay, bAcc);
      try {
        const good: string[] = [];
        const sent: number[] = [];
        const sendGood = async (text: string) => {
          good.push(text);
          sent.push(await a.call<number>("send_msg", 1, pair.inviterChat, { text }));
        };
        const append = async (mails: readonly HostileMail[]) => {
          for (const m of mails) {
            const res = await imap.append("INBOX", Buffer.from(m.raw));
            assert.ok(res, `APPEND of "${m.name}" refused`);
          }
        };
        const half = Math.ceil(corpus.length / 2);
        good.push(replayText);
        await imap.append("INBOX", Buffer.from(replay));
        await sendGood("good 1: before the corpus");
        await append(corpus.slice(0, half));
        await sendGood("good 2: in the middle");
        await append(corpus.slice(half));
        await sendGood("good 3: after the corpus ✓");
        await imap.append("INBOX", Buffer.from(replay));

        const goodOnB = await b.poll(
          () => chatMessages(b, pair.joinerChat),
          (msgs) => good.every((t) => msgs.some((m) => m.text === t)),
          60_000,
        );
        const inboxCount = async () => {
          const st = await imap.status("INBOX", { messages: true });
          return st === false ? -1 : st.messages ?? -1;
        };
        const left = await b.poll(inboxCount, (n) => n === 0, 60_000);
        const processedMs = Math.round(performance.now() - t0);

        // B's log holds only log records (no stray lines), one INFO line per mail.
        const output = b.daemon.output();
        assert.deepEqual(strayLines(output), [], "no stray unprefixed lines");
        const uids = mailProcessedLines(output).map((p) => p.uid);
        assert.equal(new Set(uids).size, uids.length, "one line per mail");

        // B is up and still answers.
        const health = await fetch(`${b.daemon.url}/health`);
        await health.body?.cancel();
        assert.equal(health.status, 200);
        assert.equal(left, 0, "INBOX ends empty: bad mail is deleted, not left to block");

        // Every real message arrived once, with IncomingMsg; nothing else came in.
        assert.deepEqual(
          goodOnB.filter((m) => m.fromId > 9).map((m) => m.text).toSorted(),
          good.toSorted(),
          "exactly A's real messages in the chat, the replayed one once",
        );
        const incoming = b.events.slice(incomingFrom).filter((e) => e.event.type === "IncomingMsg");
        const incomingTexts = (await messagesById(b, incoming.map((e) => e.event.msg_id as number)))
          .map((m) => m.text);
        assert.deepEqual(
          incomingTexts.toSorted(),
          good.toSorted(),
          "IncomingMsg only for A's real messages",
        );

        // No bad mail became a message anywhere (any chat, any sender).
        const chats = await b.call<number[]>("get_chatlist_entries", 1, null, null, null);
        const everything: string[] = [];
        for (const chat of chats) {
          for (const m of await chatMessages(b, chat)) if (m.fromId > 9) everything.push(m.text);
        }
        assert.deepEqual(everything.toSorted(), good.toSorted(), "no bad mail shows up");

        // Nobody but A is verified (key contacts and address-only contacts).
        const ids = [
          ...await b.call<number[]>("get_contact_ids", 1, 0, null),
          ...await b.call<number[]>("get_contact_ids", 1, 0x04, null),
        ];
        const verified: string[] = [];
        for (const id of new Set(ids)) {
          const c = await b.call<{ isVerified: boolean; address: string }>("get_contact", 1, id);
          if (c.isVerified) verified.push(`${id}:${c.address}`);
        }
        assert.deepEqual(verified, [`${pair.inviterOnJoiner}:${a.addr}`]);

        // Each unusable mail was recorded with a reason; the SecureJoin forgeries were not.
        const errors = readReceiveErrors(bData).slice(errorsBefore);
        const recorded = corpus.filter((m) => m.recorded);
        const table = corpus.map((m) => {
          const e = m.messageId ? errors.find((r) => r.messageId === m.messageId) : undefined;
          return `${m.recorded ? "R" : "S"} ${m.raw.length.toString().padStart(8)} B  ${m.name}` +
            (e ? `  → ${e.reason.slice(0, 100)}` : "");
        });
        console.log(
          `corpus of ${corpus.length} built in ${built} ms; all processed at +${processedMs} ms\n` +
            table.join("\n") + `\nreceive errors recorded: ${errors.length}\n` +
            errors.filter((e) => e.messageId === "").map((e) => `  (no id) ${e.reason}`)
              .join("\n"),
        );
        for (const m of recorded.filter((m) => m.messageId)) {
          assert.ok(errors.some((e) => e.messageId === m.messageId), `"${m.name}" not recorded`);
        }
        for (const m of corpus.filter((m) => !m.recorded)) {
          assert.ok(!errors.some((e) => e.messageId === m.messageId), `"${m.name}" recorded`);
        }
        assert.equal(errors.length, recorded.length, "one receive error per unusable mail");

        // A's messages were stored by B: delivery receipts brought them to 26.
        const states = await a.poll(
          () => messagesById(a, sent),
          (msgs) => msgs.every((m) => m.state === 26),
          30_000,
        );
        assert.deepEqual(states.map((m) => m.state), sent.map(() => 26));
      } finally {
        await closeMailbox(imap);
      }
    } catch (err) {
      console.error(`--- B ---\n${b.daemon.output().slice(-8000)}`);
      throw err;
    }
  },
});
