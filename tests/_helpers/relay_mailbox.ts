/**
 * A gateway's own mailbox on the test relay, opened over IMAPS with the gateway's stored account,
 * for tests that put mail straight into it (IMAP APPEND) behind the gateway's back.
 */
import type { ImapFlow } from "imapflow";
import { createImapClient } from "../../src/transport/imap_client.ts";
import type { Relay } from "./relay.ts";

/** Connects to `account`'s mailbox on `relay`; close it with {@link closeMailbox}. */
export async function openMailbox(
  relay: Relay,
  account: { readonly addr: string; readonly password: string },
): Promise<ImapFlow> {
  const imap = createImapClient(
    { host: relay.host, port: relay.imapsPort, security: "ssl", user: account.addr },
    account.password,
  );
  imap.on("error", () => {});
  await imap.connect();
  return imap;
}

/** Logs out, or drops the connection when the logout fails. */
export async function closeMailbox(imap: ImapFlow): Promise<void> {
  await imap.logout().catch(() => imap.close());
}
