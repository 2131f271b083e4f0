/**
 * An impostor against two real gateways: A is B's verified contact; mails From A's address,
 * signed by other keys and dated a year ahead, land in B's INBOX (IMAP APPEND). B stores them
 * under a new, unverified contact, and `lookup_contact_id_by_addr(A's address)` keeps answering
 * A, before and after A writes again.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { chatMessages, joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { readStoredAccount } from "../_helpers/gateway_store.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";
import { signedChatMail } from "../_helpers/signed_mail.ts";
import { closeMailbox, openMailbox } from "../_helpers/relay_mailbox.ts";

const YEAR_MS = 365 * 24 * 3600 * 1000;

/** A mail From `from` to `to`, signed by a fresh key of `from`, dated a year ahead. */
function forged(from: string, to: { addr: string; publicKey: Uint8Array }) {
  return signedChatMail({
    from,
    fromName: "A",
    to,
    messageId: `<impostor-${crypto.randomUUID()}@test.invalid>`,
    date: new Date(Date.now() + YEAR_MS),
    subject: "Message from A",
    text: "my new key, reply here",
  });
}

twoGatewaysTest({
  name: "an impostor of a verified contact's address never wins lookup_contact_id_by_addr",
  async fn({ relay, a, b }) {
    const pair = await joinBySecureJoin(a, b);
    const bAcc = readStoredAccount(`${b.dir.path}/data`);
    const lookup = () => b.call<number | null>("lookup_contact_id_by_addr", 1, a.addr);
    assert.equal(await lookup(), pair.inviterOnJoiner);

    const imap = await openMailbox(relay, bAcc);
    try {
      for (let i = 0; i < 2; i++) {
        assert.ok(await imap.append("INBOX", Buffer.from(await forged(a.addr, bAcc))));
      }
      const keyContacts = () => b.call<number[]>("get_contact_ids", 1, 0, a.addr);
      const ids = await b.poll(keyContacts, (ids) => ids.length === 3, 30_000);
      assert.equal(ids.length, 3, "two impostor keys stored beside A");
      assert.equal(await lookup(), pair.inviterOnJoiner, "the verified contact wins");
      for (const id of ids.filter((id) => id !== pair.inviterOnJoiner)) {
        const c = await b.call<{ isVerified: boolean; lastSeen: number }>("get_contact", 1, id);
        assert.equal(c.isVerified, false);
        assert.ok(c.lastSeen <= Math.ceil(Date.now() / 1000), `seen ${c.lastSeen}: clamped`);
      }

      // A writes again: still A; and nothing of the impostors landed in A's chat.
      await a.call("send_msg", 1, pair.inviterChat, { text: "still me" });
      await b.poll(
        () => chatMessages(b, pair.joinerChat),
        (msgs) => msgs.some((m) => m.text === "still me"),
        30_000,
      );
      assert.equal(await lookup(), pair.inviterOnJoiner);
      const inA = (await chatMessages(b, pair.joinerChat)).map((m) => m.text);
      assert.ok(!inA.includes("my new key, reply here"), "impostor mail is not in A's chat");
    } finally {
      await closeMailbox(imap);
    }
  },
});
