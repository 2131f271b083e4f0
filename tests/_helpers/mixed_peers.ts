/**
 * Helpers for relay tests with gateways and Delta Chat cores side by side: a chat's texts on
 * either kind of peer, a Delta Chat joining an invite, waiting on a probe, and the failure dump.
 */
import { DeltaChatPeer } from "./deltachat_peer.ts";
import type { GatewayPeer } from "./gateway_peer.ts";
import type { Relay } from "./relay.ts";

/** Texts of a gateway chat's messages, oldest first (info messages included). */
export async function gwTexts(gw: GatewayPeer, chatId: number): Promise<string[]> {
  const ids = await gw.call<number[]>("get_message_ids", 1, chatId, false, false);
  const msgs = await gw.call<Record<string, { text: string }>>("get_messages", 1, ids);
  return ids.map((id) => msgs[String(id)].text);
}

/** Texts of a Delta Chat chat's messages, oldest first. */
export async function dcTexts(dc: DeltaChatPeer, chatId: number): Promise<string[]> {
  const ids = await dc.call<number[]>("get_message_ids", dc.accountId, chatId, false, false);
  const msgs = await dc.call<Record<string, { text: string }>>("get_messages", dc.accountId, ids);
  return ids.map((id) => msgs[String(id)].text);
}

/**
 * Delta Chat `dc` joins by `link` (1:1, group or channel invite); returns the chat id once it can
 * be used: for a group, Delta Chat reports progress 1000 on vg-member-added before it applies the
 * mail that adds it, so that waits until it is a member too.
 */
export async function dcSecureJoin(dc: DeltaChatPeer, link: string): Promise<number> {
  const from = dc.events.length;
  const chat = await dc.call<number>("secure_join", dc.accountId, link);
  await dc.waitForEvent(
    (e) => e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 1000,
    60_000,
    from,
  );
  await eventually(
    () =>
      dc.call<{ chatType: string; selfInGroup: boolean }>(
        "get_full_chat_by_id",
        dc.accountId,
        chat,
      ),
    (c) => c.chatType !== "Group" || c.selfInGroup,
    "Delta Chat to be a member of the group it joined",
  );
  return chat;
}

/** Delta Chat `dc` joins `inviter`'s 1:1 invite; returns the inviter's contact id on `dc`. */
export async function dcJoins(dc: DeltaChatPeer, inviter: GatewayPeer | DeltaChatPeer) {
  const account = inviter instanceof DeltaChatPeer ? inviter.accountId : 1;
  const link = await inviter.call<string>("get_chat_securejoin_qr_code", account, null);
  const chat = await dcSecureJoin(dc, link);
  return (await dc.call<number[]>("get_chat_contacts", dc.accountId, chat))[0];
}

/** Calls `fn` until `ok` holds (every 300 ms, up to 60 s); throws naming `what` on time-out. */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  let last: T = await fn();
  while (!ok(last)) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
    last = await fn();
  }
  return last;
}

/** Prints the gateways' output, the cores' warnings and the relay's filter log; rethrows `err`. */
export async function dump(
  relay: Relay,
  gws: GatewayPeer[],
  dcs: DeltaChatPeer[],
  err: unknown,
): Promise<never> {
  for (const gw of gws) console.error(`--- ${gw.name} ---\n${gw.daemon.output().slice(-5000)}`);
  for (const dc of dcs) console.error(`--- ${dc.name} warnings ---\n${dc.warnings().join("\n")}`);
  console.error(
    await Deno.readTextFile(`${relay.dir}/log/filter.log`).then((t) => t.slice(-2000), () => ""),
  );
  throw err;
}
