/** `info`: get_info as a sorted `key: value` table. */
import { ACCOUNT_ID } from "../../constants.ts";
import type { Command, CommandContext } from "../command.ts";
import { scalarText } from "../output.ts";

async function run(ctx: CommandContext): Promise<number> {
  const result = await ctx.rpc.call("get_info", [ACCOUNT_ID]);
  await ctx.out.result(result, async (info) => {
    if (typeof info !== "object" || info === null || Array.isArray(info)) {
      return await ctx.out.value(info);
    }
    const entries = Object.entries(info as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, scalarText(v)] as const);
    await ctx.out.keyValues(entries);
  });
  return 0;
}

/** The `info` command. */
export const info: Command = {
  name: "info",
  usage: "info",
  summary: "show technical details of the account and daemon",
  http: "POST /rpc get_info [1]",
  args: { min: 0, max: 0 },
  run,
};
