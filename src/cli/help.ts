/**
 * Help texts: the global usage (every command with its HTTP equivalent, global options, exit
 * codes) and the usage of one command.
 */
import { DEFAULT_URL, GATEWAY_VERSION } from "../constants.ts";
import { GLOBAL_OPTIONS, type OptionSpec } from "./args.ts";
import type { Command } from "./command.ts";
import { formatTable } from "./output.ts";

/** The program name used in messages and help. */
export const PROG = "edge-gateway";

const EXIT_CODES = "Exit codes: 0 ok, 1 RPC or application error, 2 usage error, " +
  "3 gateway unreachable, 4 license required (JSON-RPC error -32001).";

/** The global help: usage line, every command with its HTTP equivalent, options, exit codes. */
export function globalHelp(commands: readonly Command[]): string {
  const lines = [
    `${PROG} ${GATEWAY_VERSION}: edge messaging gateway daemon and its command-line client`,
    "",
    `usage: ${PROG} [global options] <command> [args]`,
    `       ${PROG} help <command>   (or: ${PROG} <command> --help)`,
    "",
    "Every command is a thin wrapper over the daemon's HTTP API (JSON-RPC account_id is 1):",
    "",
  ];
  for (const c of commands) {
    lines.push(`  ${c.usage}`, `      ${c.summary}`, `      → ${c.http}`);
  }
  lines.push(
    "",
    "Global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    `Environment: EDGE_URL (or PRIVITTY_URL) sets the gateway address when --url is not ` +
      `given (default ${DEFAULT_URL}); EDGE_TOKEN (or PRIVITTY_TOKEN) the API token when ` +
      "--token is not given.",
    "The same program answers as privitty-edge (this CLI) and privitty-edged (the daemon).",
    EXIT_CODES,
  );
  return lines.join("\n");
}

/** The help of one command: usage, summary, HTTP equivalent, details and options. */
export function commandHelp(c: Command): string {
  const lines = [`usage: ${PROG} ${c.usage}`, "", c.summary, ""];
  if (c.forms !== undefined && c.forms.length > 1) {
    lines.push("Forms (→ HTTP equivalent):");
    for (const f of c.forms) lines.push(`  ${f.usage}`, `      ${f.summary}`, `      → ${f.http}`);
  } else {
    lines.push(`HTTP equivalent: ${c.http}`);
  }
  if (c.details !== undefined) lines.push("", c.details);
  if (c.options !== undefined && c.options.length > 0) {
    lines.push("", "Options:", ...optionLines(c.options));
  }
  lines.push("", "Global options:", ...optionLines(GLOBAL_OPTIONS), "", EXIT_CODES);
  return lines.join("\n");
}

function optionLines(options: readonly OptionSpec[]): string[] {
  const rows = options.map((o) => {
    const names = (o.short === undefined ? "" : `-${o.short}, `) + `--${o.name}`;
    return ["", o.value === undefined ? names : `${names} ${o.value}`, o.help];
  });
  return formatTable(["", "", ""], rows).slice(1);
}
