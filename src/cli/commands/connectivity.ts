/** `connectivity`: get_connectivity with the human label of its level (docs/contract.md §3.2). */
import { ACCOUNT_ID } from "../../constants.ts";
import type { Command, CommandContext } from "../command.ts";
import { connectivityLabel } from "../output.ts";

async function run(ctx: CommandContext): Promise<number> {
  const level = await ctx.rpc.call("get_connectivity", [ACCOUNT_ID]);
  await ctx.out.result(level, async (v) => {
    if (typeof v !== "number") return await ctx.out.value(v);
    await ctx.out.line(`${v} (${connectivityLabel(v)})`);
  });
  return 0;
}

/** The `connectivity` command. */
export const connectivity: Command = {
  name: "connectivity",
  usage: "connectivity",
  summary: "show the connectivity level and its meaning",
  http: "POST /rpc get_connectivity [1]",
  details: "Levels: 0 not configured, 1-1999 not connected, 2000-2999 connecting, " +
    "3000-3999 connected (working), 4000+ fully connected.",
  args: { min: 0, max: 0 },
  run,
};
