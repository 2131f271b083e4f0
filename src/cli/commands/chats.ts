/** `chats`: lists chats (get_chatlist_entries + get_chatlist_items_by_entries) as a table. */
import { ACCOUNT_ID } from "../../constants.ts";
import type { Command, CommandContext } from "../command.ts";
import { chatTypeName, scalarText } from "../output.ts";

async function run(ctx: CommandContext): Promise<number> {
  const entries = await ctx.rpc.call("get_chatlist_entries", [ACCOUNT_ID, null, null, null]);
  const ids = Array.isArray(entries) ? entries : [];
  const items = ids.length === 0
    ? {}
    : await ctx.rpc.call("get_chatlist_items_by_entries", [ACCOUNT_ID, ids]);
  const map = (typeof items === "object" && items !== null ? items : {}) as Record<string, unknown>;
  if (ctx.out.json) {
    await ctx.out.jsonLine(ids.map((id) => map[String(id)] ?? null));
    return 0;
  }
  if (ids.length === 0) {
    await ctx.out.line("no chats");
    return 0;
  }
  const rows = ids.map((id) => chatRow(id, map[String(id)]));
  await ctx.out.table(["ID", "TYPE", "NAME", "FRESH"], rows);
  return 0;
}

function chatRow(id: unknown, value: unknown): string[] {
  if (typeof value !== "object" || value === null) {
    return [scalarText(id), "", "error: missing", ""];
  }
  const item = value as Record<string, unknown>;
  if (item.kind === "Error" || item.kind === "loadingError") {
    return [scalarText(id), "", `error: ${scalarText(item.error)}`, ""];
  }
  if (item.kind === "ArchiveLink") {
    return [scalarText(id), "archive", "Archived chats", scalarText(item.freshMessageCounter)];
  }
  return [
    scalarText(id),
    chatTypeName(item.chatType),
    scalarText(item.name),
    scalarText(item.freshMessageCounter),
  ];
}

/** The `chats` command. */
export const chats: Command = {
  name: "chats",
  usage: "chats",
  summary: "list chats: id, type, name, unread count",
  http: "POST /rpc get_chatlist_entries [1,null,null,null], then " +
    "get_chatlist_items_by_entries [1,[<ids>]]",
  details: "--json prints an array of chat list items (each with its id) in chat list order.",
  args: { min: 0, max: 0 },
  run,
};
