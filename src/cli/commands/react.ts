/** `react <msg> [emoji]`: sets our reaction to a message (send_reaction); no emoji removes it. */
import { ACCOUNT_ID } from "../../constants.ts";
import { parseId } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const id = parseId(ctx.positionals[0], "message", "react");
  const emoji = ctx.positionals[1] ?? "";
  const result = await ctx.rpc.call("send_reaction", [ACCOUNT_ID, id, emoji === "" ? [] : [emoji]]);
  if (ctx.out.json) {
    await ctx.out.jsonLine(result ?? null);
    return 0;
  }
  await ctx.out.line(
    emoji === "" ? `removed your reaction from message ${id}` : `reacted ${emoji} to message ${id}`,
  );
  return 0;
}

/** The `react` command. */
export const react: Command = {
  name: "react",
  usage: "react <msg> [emoji]",
  summary: "react to a message with an emoji (none: remove our reaction)",
  http: 'POST /rpc send_reaction [1,<msg>,["<emoji>"]]',
  args: { min: 1, max: 2 },
  run,
};
