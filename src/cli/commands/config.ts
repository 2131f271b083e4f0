/** `config get <key>`: one account configuration value through get_config. */
import { ACCOUNT_ID } from "../../constants.ts";
import { UsageError } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const [action, key] = ctx.positionals;
  if (action === "set") {
    throw new UsageError(
      "config set does not exist: only 'config get <key>' does (the display name comes from " +
        "EDGE_PROFILE at first start; the address is assigned by the relay)",
      "config",
    );
  }
  if (action !== "get") {
    throw new UsageError(`unknown config action '${action}' (expected: get <key>)`, "config");
  }
  if (key === undefined) throw new UsageError("config get needs a <key>, e.g. addr", "config");
  const value = await ctx.rpc.call("get_config", [ACCOUNT_ID, key]);
  await ctx.out.result(value, async (v) => {
    if (v === null) return await ctx.out.error(`edge-gateway: ${key} is not set`);
    await ctx.out.value(v);
  });
  return 0;
}

/** The `config` command. */
export const config: Command = {
  name: "config",
  usage: "config get <key>",
  summary: "print a configuration value (keys: addr, displayname)",
  http: 'POST /rpc get_config [1,"<key>"]',
  args: { min: 1, max: 3 },
  forms: [{
    usage: "config get <key>",
    http: 'POST /rpc get_config [1,"<key>"]',
    summary: "print a configuration value (keys: addr, displayname)",
  }],
  run,
};
