/**
 * `join <link>` or `join --link <link>` (the product's form, docs/product-compat.md#cli-forms):
 * starts joining a peer through their invite link (secure_join).
 */
import { ACCOUNT_ID } from "../../constants.ts";
import { UsageError } from "../args.ts";
import { type Command, type CommandContext, stringOption } from "../command.ts";

/** The link, from `--link` or the one positional; exactly one of the two. */
function inviteLink(ctx: CommandContext): string {
  const option = stringOption(ctx, "link");
  const [positional] = ctx.positionals;
  if (option !== undefined && positional !== undefined) {
    throw new UsageError(
      "give the link once: either 'join <link>' or 'join --link <link>'",
      "join",
    );
  }
  const link = option ?? positional;
  if (link === undefined) throw new UsageError("'join' is missing <link>", "join");
  return link;
}

async function run(ctx: CommandContext): Promise<number> {
  const link = inviteLink(ctx);
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
  usage: "join <link> | join --link <link>",
  summary: "join a peer through their invite link (OPENPGP4FPR: or https://…/#…)",
  http: 'POST /rpc secure_join [1,"<link>"]',
  details: "Prints the chat id; progress arrives as events (1000 means the join completed).",
  options: [{
    name: "link",
    kind: "string",
    value: "LINK",
    help: "the invite link (the product's form of the positional <link>)",
  }],
  args: { min: 0, max: 1 },
  run,
};
