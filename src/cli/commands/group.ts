/**
 * `group create|add|remove|leave|rename|invite|members`: Delta Chat's group methods from the
 * command line (create_group_chat, add_contact_to_chat, …, get_chat_securejoin_qr_code).
 */
import { ACCOUNT_ID } from "../../constants.ts";
import { parseId, UsageError } from "../args.ts";
import type { Command, CommandContext, CommandForm } from "../command.ts";
import { scalarText } from "../output.ts";

const FORMS: readonly CommandForm[] = [
  {
    usage: "group create <name>",
    http: 'POST /rpc create_group_chat [1,"<name>",false]',
    summary: "create a group with you as its only member; prints its chat id",
  },
  {
    usage: "group add <chat> <contact>",
    http: "POST /rpc add_contact_to_chat [1,<chat>,<contact>]",
    summary: "add a contact (it needs a key: join an invite first)",
  },
  {
    usage: "group remove <chat> <contact>",
    http: "POST /rpc remove_contact_from_chat [1,<chat>,<contact>]",
    summary: "remove a member",
  },
  {
    usage: "group leave <chat>",
    http: "POST /rpc leave_group [1,<chat>]",
    summary: "leave the group",
  },
  {
    usage: "group rename <chat> <name>",
    http: 'POST /rpc set_chat_name [1,<chat>,"<name>"]',
    summary: "rename the group for every member",
  },
  {
    usage: "group invite <chat>",
    http: "POST /rpc get_chat_securejoin_qr_code [1,<chat>]",
    summary: "print an invite link to the group (Delta Chat users scan or open it)",
  },
  {
    usage: "group members <chat>",
    http: "POST /rpc get_chat_contacts [1,<chat>], get_past_chat_contacts [1,<chat>]",
    summary: "list the members (1 is you) and past members",
  },
];

/** The positionals a form takes after its action word. */
const ARITY: Readonly<Record<string, number>> = {
  create: 1,
  add: 2,
  remove: 2,
  leave: 1,
  rename: 2,
  invite: 1,
  members: 1,
};

async function run(ctx: CommandContext): Promise<number> {
  const [action, ...rest] = ctx.positionals;
  if (!Object.hasOwn(ARITY, action ?? "")) {
    throw new UsageError(
      `unknown group action '${action ?? ""}' (expected ${Object.keys(ARITY).join(", ")})`,
      "group",
    );
  }
  if (rest.length !== ARITY[action]) {
    const form = FORMS.find((f) => f.usage.split(" ")[1] === action)!;
    throw new UsageError(`wrong number of arguments; usage: ${form.usage}`, "group");
  }
  const chat = () => parseId(rest[0], "chat", "group");
  const contact = () => parseId(rest[1], "contact", "group");
  const done = (v: unknown) => ctx.out.result(v, (x) => ctx.out.value(x));
  switch (action) {
    case "create": {
      const id = await ctx.rpc.call("create_group_chat", [ACCOUNT_ID, rest[0], false]);
      await ctx.out.result(id, (v) => ctx.out.value(v));
      return 0;
    }
    case "add":
      await done(await ctx.rpc.call("add_contact_to_chat", [ACCOUNT_ID, chat(), contact()]));
      return 0;
    case "remove":
      await done(await ctx.rpc.call("remove_contact_from_chat", [ACCOUNT_ID, chat(), contact()]));
      return 0;
    case "leave":
      await done(await ctx.rpc.call("leave_group", [ACCOUNT_ID, chat()]));
      return 0;
    case "rename":
      await done(await ctx.rpc.call("set_chat_name", [ACCOUNT_ID, chat(), rest[1]]));
      return 0;
    case "invite": {
      const link = await ctx.rpc.call("get_chat_securejoin_qr_code", [ACCOUNT_ID, chat()]);
      await ctx.out.result(link, (v) => ctx.out.value(v));
      return 0;
    }
    default:
      return await members(ctx, chat());
  }
}

async function members(ctx: CommandContext, chatId: number): Promise<number> {
  const now = await ctx.rpc.call("get_chat_contacts", [ACCOUNT_ID, chatId]);
  const past = await ctx.rpc.call("get_past_chat_contacts", [ACCOUNT_ID, chatId]);
  if (ctx.out.json) {
    await ctx.out.jsonLine({ members: now, pastMembers: past });
    return 0;
  }
  const rows = [
    ...(Array.isArray(now) ? now : []).map((id) => [scalarText(id), "member"]),
    ...(Array.isArray(past) ? past : []).map((id) => [scalarText(id), "past member"]),
  ];
  await ctx.out.table(["CONTACT", "STATUS"], rows);
  return 0;
}

/** The `group` command. */
export const group: Command = {
  name: "group",
  usage: "group <create|add|remove|leave|rename|invite|members> …",
  summary: "groups: create, change members, rename, invite, list members",
  http: FORMS.map((f) => f.http).join("; "),
  details: "--json prints the raw results ({members, pastMembers} for 'members').",
  args: { min: 1, max: 3 },
  forms: FORMS,
  run,
};
