/**
 * Which program runs: the product's `privitty-edged` is always the daemon, `privitty-edge` always
 * the CLI, and the neutral `edge-gateway` is one or the other by its arguments.
 */
import process from "node:process";
import { isCliCommand } from "./cli/mod.ts";

/**
 * Program names, as the product publishes them (docs/product-compat.md#program-names) and our own.
 */
export const ProgramName = {
  DAEMON: "privitty-edged",
  CLI: "privitty-edge",
  NEUTRAL: "edge-gateway",
} as const;

/** What a name makes the program do. */
export type ProgramRole = "daemon" | "cli" | "any";

/**
 * The role of a program invoked as `invokedAs` (a path or a name). A name counts when it is the
 * product's name itself or followed by `-` or `.` (`privitty-edged-x86_64-unknown-linux-gnu`).
 */
export function roleOf(invokedAs: string): ProgramRole {
  const base = invokedAs.slice(invokedAs.lastIndexOf("/") + 1);
  const named = (name: string) =>
    base === name || base.startsWith(`${name}-`) || base.startsWith(`${name}.`);
  if (named(ProgramName.DAEMON)) return "daemon";
  if (named(ProgramName.CLI)) return "cli";
  return "any";
}

/**
 * The name this process was started as: `argv[0]` (a symlink's own name, the name `docker exec`
 * was given), which needs no permission; `deno run main.ts` reports `deno` here.
 */
export function invokedName(): string {
  return process.argv0;
}

/** Options whose value is the next argument, of `serve` and the CLI's global options. */
const VALUE_OPTIONS: ReadonlySet<string> = new Set([
  "--port",
  "--host",
  "--data-dir",
  "--files-dir",
  "--listen",
  "--accounts",
  "--url",
  "--timeout",
]);

function isCliOnlyFlag(arg: string): boolean {
  return arg === "--help" || arg === "-h" || arg === "--version" || arg.startsWith("--url") ||
    arg === "--json" || arg.startsWith("--timeout");
}

/**
 * For the neutral name: no arguments, or only options and their values without a CLI-only
 * global option first (`--help`, `--version`, `--url`, `--json`, `--timeout`), run the daemon
 * (`--listen 0.0.0.0:7200 --accounts /var/lib/privitty --cors`); any command word runs the CLI.
 */
export function runsDaemon(args: readonly string[]): boolean {
  const [first] = args;
  if (first === undefined) return true;
  if (isCliOnlyFlag(first) || isCliCommand(first)) return false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-")) return false; // a command (or a stray word the CLI explains)
    if (VALUE_OPTIONS.has(arg)) i++;
  }
  return true;
}
