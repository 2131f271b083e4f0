/** `send <chat> <text>`: sends a text message (send_msg) and prints the new message id. */
import { ACCOUNT_ID } from "../../constants.ts";
import { parseId } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const [chat, text] = ctx.positionals;
  const chatId = parseId(chat, "chat", "send");
  const result = await ctx.rpc.call("send_msg", [ACCOUNT_ID, chatId, { text }]);
  await ctx.out.result(result, (v) => printMessageId(ctx, v));
  return 0;
}

/** Prints the id `send_msg` returned as `message <id>`. */
export async function printMessageId(ctx: CommandContext, value: unknown): Promise<void> {
  if (typeof value === "number") await ctx.out.line(`message ${value}`);
  else await ctx.out.value(value);
}

/** The `send` command. */
export const send: Command = {
  name: "send",
  usage: "send <chat> <text>",
  summary: "send a text message to a chat; prints the message id",
  http: 'POST /rpc send_msg [1,<chat>,{"text":"<text>"}]',
  details: "Quote the text; put '--' before a text that starts with '-'.",
  args: { min: 2, max: 2 },
  run,
};
