/**
 * `rpc <method> [json-params]`: a raw JSON-RPC call with positional params (a JSON array,
 * default `[]`); prints the result as JSON.
 */
import { UsageError } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";

async function run(ctx: CommandContext): Promise<number> {
  const [method, paramsText] = ctx.positionals;
  const params = paramsText === undefined ? [] : parseParams(paramsText);
  const result = await ctx.rpc.call(method, params);
  await ctx.out.result(result, (v) => ctx.out.line(JSON.stringify(v, null, 2)));
  return 0;
}

/**
 * Parses the params argument: it must be a JSON array (params are positional, docs/contract.md
 * §4.2).
 */
export function parseParams(text: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new UsageError(
      `json-params is not valid JSON (${reason}); expected an array such as '[1, "addr"]'`,
      "rpc",
    );
  }
  if (!Array.isArray(value)) {
    const kind = value === null ? "null" : typeof value === "object" ? "an object" : typeof value;
    throw new UsageError(
      `json-params must be a JSON array of positional params, got ${kind}; e.g. '[1]'`,
      "rpc",
    );
  }
  return value;
}

/** The `rpc` command. */
export const rpc: Command = {
  name: "rpc",
  usage: "rpc <method> [json-params]",
  summary: "call any JSON-RPC method and print its result as JSON",
  http: 'POST /rpc {"jsonrpc":"2.0","method":<method>,"params":<json-params>,"id":1}',
  details: "json-params is a JSON array of positional params (default []); account_id is 1.\n" +
    "Example: edge-gateway rpc get_config '[1, \"addr\"]'",
  args: { min: 1, max: 2 },
  run,
};
