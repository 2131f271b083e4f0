/** `invite`: prints a 1:1 invite link (OPENPGP4FPR:…) for a peer to join with. */
import { ACCOUNT_ID } from "../../constants.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const link = await ctx.rpc.call("get_chat_securejoin_qr_code", [ACCOUNT_ID, null]);
  await ctx.out.result(link, (v) => ctx.out.value(v));
  return 0;
}

/** The `invite` command. */
export const invite: Command = {
  name: "invite",
  usage: "invite",
  summary: "print an invite link for a peer (they run 'join <link>')",
  http: "POST /rpc get_chat_securejoin_qr_code [1,null]",
  args: { min: 0, max: 0 },
  run,
};
