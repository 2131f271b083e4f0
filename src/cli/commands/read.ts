/** `read <msg>...`: marks messages as seen (markseen_msgs), which sends read receipts. */
import { ACCOUNT_ID } from "../../constants.ts";
import { parseId } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const ids = ctx.positionals.map((p) => parseId(p, "message", "read"));
  const result = await ctx.rpc.call("markseen_msgs", [ACCOUNT_ID, ids]);
  if (ctx.out.json) {
    await ctx.out.jsonLine(result ?? null);
    return 0;
  }
  const n = ids.length;
  await ctx.out.line(`marked ${n} message${n === 1 ? "" : "s"} as read (${ids.join(", ")})`);
  return 0;
}

/** The `read` command. */
export const read: Command = {
  name: "read",
  usage: "read <msg>...",
  summary: "mark messages as read",
  http: "POST /rpc markseen_msgs [1,[<msg>,...]]",
  args: { min: 1, max: Infinity },
  run,
};
