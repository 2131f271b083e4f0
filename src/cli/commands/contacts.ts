/** `contacts`: lists contacts (get_contact_ids, then get_contact for each) as a table. */
import { ACCOUNT_ID } from "../../constants.ts";
import type { Command, CommandContext } from "../command.ts";
import { scalarText } from "../output.ts";
import { RpcError } from "../rpc_client.ts";

async function run(ctx: CommandContext): Promise<number> {
  const ids = await ctx.rpc.call("get_contact_ids", [ACCOUNT_ID, 0, null]);
  const list = Array.isArray(ids) ? ids : [];
  const contacts: unknown[] = [];
  for (const id of list) {
    try {
      contacts.push(await ctx.rpc.call("get_contact", [ACCOUNT_ID, id]));
    } catch (err) {
      if (!(err instanceof RpcError) || err.licenseRequired) throw err;
      contacts.push({ kind: "Error", id, error: err.message });
    }
  }
  if (ctx.out.json) {
    await ctx.out.jsonLine(contacts);
    return 0;
  }
  if (contacts.length === 0) {
    await ctx.out.line("no contacts");
    return 0;
  }
  const rows = contacts.map((c, i) => contactRow(list[i], c));
  await ctx.out.table(["ID", "ADDRESS", "NAME", "VERIFIED"], rows);
  return 0;
}

function contactRow(id: unknown, value: unknown): string[] {
  const c = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (c.kind === "Error" || c.kind === "loadingError") {
    return [scalarText(id), "", `error: ${scalarText(c.error)}`, ""];
  }
  const name = [c.displayName, c.name, c.authName].find((n) => typeof n === "string" && n !== "");
  return [
    scalarText(c.id ?? id),
    scalarText(c.address),
    scalarText(name),
    c.isVerified === true ? "yes" : "no",
  ];
}

/** The `contacts` command. */
export const contacts: Command = {
  name: "contacts",
  usage: "contacts",
  summary: "list contacts: id, address, name, verified",
  http: "POST /rpc get_contact_ids [1,0,null], then get_contact [1,<id>] for each id",
  details: "--json prints the array of get_contact results in id order.",
  args: { min: 0, max: 0 },
  run,
};
