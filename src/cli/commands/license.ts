/**
 * `license status|activate <url>|sync|deactivate`: the license RPC methods of the gateway; with
 * the global `--accounts DIR` and no daemon answering, `status` reads the license file there.
 */
import { ACCOUNT_ID } from "../../constants.ts";
import { UsageError } from "../args.ts";
import type { Command, CommandContext, CommandForm } from "../command.ts";
import { offlineLicenseStatus, offlineNotAvailable } from "../offline_license.ts";
import { scalarText } from "../output.ts";
import { UnreachableError } from "../rpc_client.ts";

const FORMS: readonly CommandForm[] = [
  {
    usage: "license status",
    http: "POST /rpc license_status [1]",
    summary: "show the license status (no_license when none is installed)",
  },
  {
    usage: "license activate <url>",
    http: 'POST /rpc license_activate [1,"<url>"]',
    summary: "activate a license from its delivery URL",
  },
  { usage: "license sync", http: "POST /rpc license_sync [1]", summary: "refresh the license" },
  {
    usage: "license deactivate",
    http: "POST /rpc license_deactivate [1]",
    summary: "deactivate the license on this device",
  },
];

async function run(ctx: CommandContext): Promise<number> {
  const [action, url] = ctx.positionals;
  const expectArgs = (n: number) => {
    if (ctx.positionals.length - 1 !== n) {
      const form = FORMS.find((f) => f.usage.split(" ")[1] === action);
      throw new UsageError(`wrong number of arguments; usage: ${form?.usage}`, "license");
    }
  };
  let result: unknown;
  switch (action) {
    case "status":
      expectArgs(0);
      result = await callOrOffline(ctx, "license_status", [ACCOUNT_ID], offlineLicenseStatus);
      return await printStatus(ctx, result);
    case "activate":
      if (url === undefined) throw new UsageError("license activate needs a <url>", "license");
      expectArgs(1);
      result = await callOrOffline(ctx, "license_activate", [ACCOUNT_ID, url], action);
      break;
    case "sync":
      expectArgs(0);
      result = await callOrOffline(ctx, "license_sync", [ACCOUNT_ID], action);
      break;
    case "deactivate":
      expectArgs(0);
      result = await callOrOffline(ctx, "license_deactivate", [ACCOUNT_ID], action);
      break;
    default:
      throw new UsageError(
        `unknown license action '${action}' (expected status, activate <url>, sync or deactivate)`,
        "license",
      );
  }
  await ctx.out.result(result, (v) => ctx.out.value(v));
  return 0;
}

/**
 * Calls `method` on the daemon; when none answers and `--accounts DIR` was given, answers from
 * that directory with `offline` (a function of it), or fails saying why `action` needs a daemon.
 */
async function callOrOffline(
  ctx: CommandContext,
  method: string,
  params: unknown[],
  offline: ((dir: string) => unknown) | string,
): Promise<unknown> {
  try {
    return await ctx.rpc.call(method, params);
  } catch (err) {
    if (!(err instanceof UnreachableError) || ctx.accounts === undefined) throw err;
    if (typeof offline === "string") throw offlineNotAvailable(offline, ctx.accounts, err.message);
    return offline(ctx.accounts);
  }
}

async function printStatus(ctx: CommandContext, result: unknown): Promise<number> {
  await ctx.out.result(result, async (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return await ctx.out.value(v);
    const record = v as Record<string, unknown>;
    const keys = Object.keys(record).sort((a, b) =>
      a === "status" ? -1 : b === "status" ? 1 : a < b ? -1 : a > b ? 1 : 0
    );
    await ctx.out.keyValues(keys.map((k) => [k, scalarText(record[k])]));
  });
  return 0;
}

/** The `license` command. */
export const license: Command = {
  name: "license",
  usage: "license status|activate <url>|sync|deactivate",
  summary: "show, activate, sync or deactivate the license",
  http: 'POST /rpc license_status [1] | license_activate [1,"<url>"] | license_sync [1] | ' +
    "license_deactivate [1]",
  details: "With the global --accounts DIR and no daemon answering, 'license status' verifies " +
    "and judges the license file in DIR (activate, sync and deactivate need the daemon).",
  args: { min: 1, max: 2 },
  forms: FORMS,
  run,
};
