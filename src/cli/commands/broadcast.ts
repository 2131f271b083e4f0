/** `broadcast create|invite`: a broadcast channel the gateway owns, and its invite link. */
import { ACCOUNT_ID } from "../../constants.ts";
import { parseId, UsageError } from "../args.ts";
import type { Command, CommandContext, CommandForm } from "../command.ts";

const FORMS: readonly CommandForm[] = [
  {
    usage: "broadcast create <name>",
    http: 'POST /rpc create_broadcast [1,"<name>"]',
    summary: "create a channel you own; prints its chat id (post to it with 'send')",
  },
  {
    usage: "broadcast invite <chat>",
    http: "POST /rpc get_chat_securejoin_qr_code [1,<chat>]",
    summary: "print the channel's invite link (subscribers join only by it)",
  },
];

async function run(ctx: CommandContext): Promise<number> {
  const [action, arg, ...more] = ctx.positionals;
  if (action !== "create" && action !== "invite") {
    throw new UsageError(
      `unknown broadcast action '${action ?? ""}' (expected create or invite)`,
      "broadcast",
    );
  }
  if (arg === undefined || more.length > 0) {
    const form = FORMS.find((f) => f.usage.split(" ")[1] === action)!;
    throw new UsageError(`wrong number of arguments; usage: ${form.usage}`, "broadcast");
  }
  const result = action === "create"
    ? await ctx.rpc.call("create_broadcast", [ACCOUNT_ID, arg])
    : await ctx.rpc.call("get_chat_securejoin_qr_code", [
      ACCOUNT_ID,
      parseId(arg, "chat", "broadcast"),
    ]);
  await ctx.out.result(result, (v) => ctx.out.value(v));
  return 0;
}

/** The `broadcast` command. */
export const broadcast: Command = {
  name: "broadcast",
  usage: "broadcast <create|invite> …",
  summary: "broadcast channels: create one, print its invite link",
  http: FORMS.map((f) => f.http).join("; "),
  args: { min: 1, max: 2 },
  forms: FORMS,
  run,
};
