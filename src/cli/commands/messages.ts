/**
 * `messages <chat>`: lists a chat's messages (get_message_ids + get_messages) with time, sender,
 * state symbol (✓ sent, ✓✓ delivered, 👁 read), text and file.
 */
import { ACCOUNT_ID, ContactId } from "../../constants.ts";
import { parseId } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { formatTime, oneLine, scalarText, stateSymbol } from "../output.ts";

async function run(ctx: CommandContext): Promise<number> {
  const chatId = parseId(ctx.positionals[0], "chat", "messages");
  const result = await ctx.rpc.call("get_message_ids", [ACCOUNT_ID, chatId, false, false]);
  const ids = Array.isArray(result) ? result : [];
  const messages = ids.length === 0 ? {} : await ctx.rpc.call("get_messages", [ACCOUNT_ID, ids]);
  const map = (typeof messages === "object" && messages !== null ? messages : {}) as Record<
    string,
    unknown
  >;
  if (ctx.out.json) {
    await ctx.out.jsonLine(ids.map((id) => map[String(id)] ?? null));
    return 0;
  }
  if (ids.length === 0) {
    await ctx.out.line(`no messages in chat ${chatId}`);
    return 0;
  }
  const rows = ids.map((id) => messageRow(id, map[String(id)]));
  await ctx.out.table(["ID", "TIME (UTC)", "FROM", "STATE", "TEXT", "FILE"], rows);
  return 0;
}

function messageRow(id: unknown, value: unknown): string[] {
  if (typeof value !== "object" || value === null) {
    return [scalarText(id), "", "", "", "error: missing", ""];
  }
  const m = value as Record<string, unknown>;
  if (m.kind === "loadingError" || m.kind === "Error") {
    return [scalarText(id), "", "", "", `error: ${scalarText(m.error)}`, ""];
  }
  return [
    scalarText(m.id ?? id),
    formatTime(m.timestamp),
    senderName(m),
    stateSymbol(m.state),
    oneLine(scalarText(m.text)),
    scalarText(m.file),
  ];
}

function senderName(m: Record<string, unknown>): string {
  if (m.fromId === ContactId.SELF) return "me";
  const sender = m.sender as Record<string, unknown> | undefined;
  const name = sender?.displayName;
  if (typeof name === "string" && name !== "") return name;
  return m.fromId === undefined ? "" : `#${scalarText(m.fromId)}`;
}

/** The `messages` command. */
export const messages: Command = {
  name: "messages",
  usage: "messages <chat>",
  summary: "list a chat's messages: id, time, sender, state (✓ ✓✓ 👁), text, file",
  http: "POST /rpc get_message_ids [1,<chat>,false,false], then get_messages [1,[<ids>]]",
  details: "State symbols: … pending, ✓ sent (on the server), ✓✓ delivered, 👁 read, ✗ failed; " +
    "fresh and seen incoming messages have none.\n" +
    "--json prints an array of message objects (each with its id) in chat order.",
  args: { min: 1, max: 1 },
  run,
};
