/**
 * The relay's message limit, end to end on the project's relay with its limit lowered (the same
 * code path as chatmail's 30 MiB): learned from SMTP SIZE and shown by get_info; a file over what
 * one mail can carry goes to a gateway as relay parts (docs/transfer.md) and is refused at once
 * for a Delta Chat peer (-1 naming the file size, the limit and who) with nothing stored; the
 * largest file that fits, which the refusal names, arrives whole at the Delta Chat peer; in a
 * group the refusal names the members that take no parts.
 */
import assert from "node:assert/strict";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import type { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { RpcError } from "../_helpers/gateway_peer.ts";
import { dcJoins } from "../_helpers/mixed_peers.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

const LIMIT = 300_000;

function randomBytes(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(out.subarray(i, i + 65_536));
  return out;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What A has stored: messages of the chat, queued mails and blob files. */
async function stored(gw: GatewayPeer, chatId: number) {
  const ids = await gw.call<number[]>("get_message_ids", 1, chatId, false, false);
  const info = await gw.call<Record<string, string>>("get_info", 1);
  const blobs: string[] = [];
  for await (const e of Deno.readDir(info.blobdir)) blobs.push(e.name);
  return { messages: ids.length, outbox: info.outbox_len, blobs: blobs.sort() };
}

/** Sends `bytes` as a file to `chatId`; resolves the message id or rejects with the RpcError. */
async function sendFile(gw: GatewayPeer, chatId: number, name: string, bytes: Uint8Array) {
  const dir = `${gw.dir.path}/data/files`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeFile(`${dir}/${name}`, bytes);
  return await gw.call<number>("send_msg", 1, chatId, { text: "", file: `${dir}/${name}` });
}

/** Sends a file over the limit: -1 at once, nothing stored; returns the refusal's text. */
async function refused(gw: GatewayPeer, chatId: number, size: number): Promise<string> {
  const before = await stored(gw, chatId);
  const err = await sendFile(gw, chatId, `big-${size}.bin`, randomBytes(size)).then(
    () => assert.fail(`a ${size}-byte file was accepted`),
    (e) => e,
  );
  assert.ok(err instanceof RpcError, String(err));
  assert.equal(err.code, -1);
  for (const part of [`(${size} bytes)`, `limit of ${LIMIT} bytes`]) {
    assert.ok(err.message.includes(part), `"${part}" in: ${err.message}`);
  }
  assert.deepEqual(await stored(gw, chatId), before, "no message, no outbox row, no blob");
  return err.message;
}

/** The largest file size the refusal names. */
function largest(message: string): number {
  const m = /the largest file that fits is (\d+) bytes/.exec(message);
  assert.ok(m, `no largest size in: ${message}`);
  return Number(m[1]);
}

twoGatewaysTest({
  name: "relay limit: learned, shown; over it a gateway gets relay parts, under it one mail",
  relay: { messageSizeLimit: LIMIT },
  async fn({ a, b }) {
    const info = await a.call<Record<string, string>>("get_info", 1);
    assert.equal(info.max_message_bytes, String(LIMIT));
    const pair = await joinBySecureJoin(b, a);
    const chat = pair.joinerChat;

    // Over the one-mail limit to a gateway: relay parts, not a refusal; the file arrives whole.
    for (
      const [name, size] of [["over.bin", LIMIT], ["under.bin", Math.floor(LIMIT / 4)]] as const
    ) {
      const bytes = randomBytes(size);
      const fromB = b.events.length;
      const id = await sendFile(a, chat, name, bytes);
      const got = await b.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, fromB);
      const msg = (await b.call<Record<string, { file: string | null }>>("get_messages", 1, [
        got.event.msg_id,
      ]))[String(got.event.msg_id)];
      assert.equal(await sha256(await Deno.readFile(msg.file!)), await sha256(bytes));
      const state = await a.poll(
        async () => (await a.call<{ state: number }>("get_message", 1, id)).state,
        (s) => s >= 20,
      );
      assert.ok(state >= 20 && state !== 24, `state ${state}`);
      // B's confirmation reaches A after B showed the file.
      const want = size === LIMIT ? "done" : "none";
      const transfer = await a.poll(
        () => a.call<{ state: string }>("get_transfer", 1, id).then((t) => t.state, () => "none"),
        (t) => t === want,
      );
      assert.equal(transfer, want, name);
    }
  },
});

twoGatewaysTest({
  name:
    "relay limit: a Delta Chat peer gets -1 over the limit, the file under it; a group names members",
  ignore: !deltaChatInstalled(),
  relay: { messageSizeLimit: LIMIT },
  async fn({ relay, a, b }) {
    await using dc = await DeltaChatPeer.start("dcsize", relay, { displayName: "Dora" });
    const fromA = a.events.length;
    await dcJoins(dc, a);
    const done = await a.waitForEvent(
      (e) => e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000,
      60_000,
      fromA,
    );
    const dcChat = done.event.chat_id as number;
    const dcOnA = done.event.contact_id as number;

    const over = await refused(a, dcChat, 200_000);
    assert.ok(over.includes(dc.addr), over);
    const fits = largest(over);
    const bytes = randomBytes(fits);
    const fromDc = dc.events.length;
    await sendFile(a, dcChat, "for-dora.bin", bytes);
    const inDc = await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 60_000, fromDc);
    const dcMsg = await dc.call<{ file: string | null; fileName: string }>(
      "get_message",
      dc.accountId,
      inDc.event.msgId,
    );
    assert.equal(dcMsg.fileName, "for-dora.bin");
    assert.equal(await sha256(await Deno.readFile(dcMsg.file!)), await sha256(bytes));

    const pair = await joinBySecureJoin(b, a);
    const group = await a.call<number>("create_group_chat", 1, "Sizes", false);
    await a.call("add_contact_to_chat", 1, group, dcOnA);
    await a.call("add_contact_to_chat", 1, group, pair.inviterOnJoiner);
    // B's gateway takes relay parts, the Delta Chat peer does not: only Dora is named.
    const inGroup = await refused(a, group, 250_000);
    assert.match(inGroup, /group member /);
    assert.ok(inGroup.includes(dc.addr) && !inGroup.includes(b.addr), inGroup);
  },
});
