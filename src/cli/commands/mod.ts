/**
 * The command table: one entry per command, each defined in its own file. The order here is the
 * order of the help text and of docs/cli.md's table.
 */
import type { Command } from "../command.ts";
import { backup } from "./backup.ts";
import { broadcast } from "./broadcast.ts";
import { chats } from "./chats.ts";
import { config } from "./config.ts";
import { connectivity } from "./connectivity.ts";
import { contacts } from "./contacts.ts";
import { events } from "./events.ts";
import { fingerprint } from "./fingerprint.ts";
import { group } from "./group.ts";
import { health } from "./health.ts";
import { info } from "./info.ts";
import { invite } from "./invite.ts";
import { join } from "./join.ts";
import { license } from "./license.ts";
import { messages } from "./messages.ts";
import { react } from "./react.ts";
import { read } from "./read.ts";
import { rpc } from "./rpc.ts";
import { send } from "./send.ts";
import { sendFile } from "./send_file.ts";
import { serve } from "./serve.ts";
import { view } from "./view.ts";

/** Every command with its usage, summary and HTTP equivalent. */
export const COMMANDS: readonly Command[] = [
  serve,
  health,
  rpc,
  info,
  config,
  connectivity,
  events,
  license,
  backup,
  invite,
  join,
  contacts,
  chats,
  group,
  broadcast,
  messages,
  send,
  sendFile,
  read,
  react,
  fingerprint,
  view,
];

/** Looks a command up by name. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}
