/** `join <link>`: starts joining a peer through their invite link (secure_join). */
import { ACCOUNT_ID } from "../../constants.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const [link] = ctx.positionals;
  const result = await ctx.rpc.call("secure_join", [ACCOUNT_ID, link]);
  await ctx.out.result(result, async (v) => {
    if (typeof v !== "number") return await ctx.out.value(v);
    await ctx.out.line(`chat ${v}`);
  });
  if (!ctx.out.json) {
    await ctx.out.error(
      "edge-gateway: the handshake continues in the background; follow it with " +
        "'edge-gateway events --kind SecurejoinJoinerProgress' (1000 = done)",
    );
  }
  return 0;
}

/** The `join` command. */
export const join: Command = {
  name: "join",
  usage: "join <link>",
  summary: "join a peer through their invite link (OPENPGP4FPR: or https://…/#…)",
  http: 'POST /rpc secure_join [1,"<link>"]',
  details: "Prints the chat id; progress arrives as events (1000 means the join completed).",
  args: { min: 1, max: 1 },
  run,
};
