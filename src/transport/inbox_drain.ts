/**
 * Hands every message in INBOX to a delivery callback, one at a time, and deletes a message only
 * after its callback resolved (the callback commits it to the store first). A callback that
 * throws keeps its message on the server, is logged, and does not block the messages after it.
 */
import { logger } from "../log.ts";
import type { createImapClient } from "./imap_client.ts";

const log = logger("imap");

/** Receives one raw message; resolving means "stored, safe to delete". */
export type DeliverMail = (raw: Uint8Array, uid: number) => Promise<void>;

/** Most messages fetched per pass (the rest follow in the next pass). */
export const DRAIN_BATCH = 100;

/**
 * One pass over INBOX. `skip` holds UIDs whose delivery failed in this connection, so a bad
 * message is not retried in a loop (it is retried after a reconnect or restart).
 * Returns the number of messages delivered and deleted.
 */
export async function drainInbox(
  client: ReturnType<typeof createImapClient>,
  deliver: DeliverMail,
  skip: Set<number>,
): Promise<number> {
  await client.noop(); // refresh the EXISTS count imapflow answers from
  if (!client.mailbox || client.mailbox.exists === 0) return 0;
  const fetched: { uid: number; source: Uint8Array }[] = [];
  for await (const msg of client.fetch("1:*", { uid: true, source: true })) {
    if (skip.has(msg.uid) || !msg.source) continue;
    fetched.push({ uid: msg.uid, source: new Uint8Array(msg.source) });
    if (fetched.length >= DRAIN_BATCH) break;
  }
  const done: number[] = [];
  for (const { uid, source } of fetched) {
    try {
      await deliver(source, uid);
      done.push(uid);
    } catch (err) {
      skip.add(uid);
      log.warn("could not process a message; it stays on the server", {
        uid,
        bytes: source.length,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  if (done.length > 0) await client.messageDelete(done.join(","), { uid: true });
  return done.length;
}
