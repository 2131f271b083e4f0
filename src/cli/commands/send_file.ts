/**
 * `send-file <chat> <path> [--text T]`: sends a file attachment (send_msg with viewtype File).
 * The path is on the daemon host; the CLI passes it along and never reads the file itself.
 */
import { ACCOUNT_ID } from "../../constants.ts";
import { Viewtype } from "../../protocol.ts";
import { parseId, UsageError } from "../args.ts";
import { type Command, type CommandContext, stringOption } from "../command.ts";
import { printMessageId } from "./send.ts";
import { showTransferProgress } from "../transfer_progress.ts";

async function run(ctx: CommandContext): Promise<number> {
  const [chat, path] = ctx.positionals;
  const chatId = parseId(chat, "chat", "send-file");
  if (path === "") throw new UsageError("send-file needs a non-empty <path>", "send-file");
  const text = stringOption(ctx, "text");
  const data: Record<string, string> = { file: path, viewtype: Viewtype.FILE };
  if (text !== undefined) data.text = text;
  const result = await ctx.rpc.call("send_msg", [ACCOUNT_ID, chatId, data]);
  await ctx.out.result(result, (v) => printMessageId(ctx, v));
  if (typeof result === "number") await showTransferProgress(ctx, result);
  return 0;
}

/** The `send-file` command. */
export const sendFile: Command = {
  name: "send-file",
  usage: "send-file <chat> <path> [--text T]",
  summary: "send a file (a path on the daemon host) to a chat; prints the message id",
  http: 'POST /rpc send_msg [1,<chat>,{"file":"<path>","viewtype":"File","text":"<T>"}]',
  details: "The daemon reads <path> (an absolute path on its host or in its container), so the " +
    "file must exist there, not where the CLI runs. A file sent as relay parts shows a progress " +
    "bar on stderr (a terminal only) until the recipients confirmed it.",
  options: [{ name: "text", kind: "string", value: "T", help: "message text to send with it" }],
  args: { min: 2, max: 2 },
  run,
};
