/**
 * Entry point of the edge messaging gateway. Invoked as `privitty-edged` it is the daemon, as
 * `privitty-edge` the CLI; as `edge-gateway` (or `deno run main.ts`) `serve`, no arguments or
 * daemon flags only run the daemon, and a command runs the CLI against a running daemon.
 */
import "./src/env_shim.ts";
import { isCliCommand, runCli } from "./src/cli/mod.ts";
import { runDaemon, SERVE_USAGE } from "./src/daemon.ts";
import { invokedName, roleOf } from "./src/program_name.ts";

/** Options whose value is the next argument, of `serve` and the CLI's global options. */
const VALUE_OPTIONS = new Set([
  "--port",
  "--host",
  "--data-dir",
  "--files-dir",
  "--listen",
  "--accounts",
  "--url",
  "--timeout",
]);

/**
 * Runs the program with `args` and resolves to its exit code. `invokedAs` is the program's name
 * (argv[0] by default; tests pass the product's names).
 */
export async function main(
  args: readonly string[],
  invokedAs: string = invokedName(),
): Promise<number> {
  const role = roleOf(invokedAs);
  const [first, ...rest] = args;
  if (role === "daemon") return await serve(first === "serve" ? rest : args);
  if (first === "serve") return await serve(rest);
  if (role === "cli" || !runsDaemon(args)) return await runCli([...args]);
  return await serve(args);
}

/**
 * For the neutral name: no arguments, or only options and their values without a CLI-only
 * global option first (`--help`, `--version`, `--url`, `--json`, `--timeout`), run the daemon
 * (`--listen 0.0.0.0:7200 --accounts /var/lib/privitty --cors`); any command word runs the CLI.
 */
export function runsDaemon(args: readonly string[]): boolean {
  const [first] = args;
  if (first === undefined) return true;
  if (isCliOnlyFlag(first) || first === "-h" || isCliCommand(first)) return false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-")) return false; // a command (or a stray word the CLI explains)
    if (VALUE_OPTIONS.has(arg)) i++;
  }
  return true;
}

function isCliOnlyFlag(arg: string): boolean {
  return arg === "--help" || arg === "--version" || arg.startsWith("--url") ||
    arg === "--json" || arg.startsWith("--timeout");
}

async function serve(args: readonly string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(SERVE_USAGE);
    return 0;
  }
  return await runDaemon(args);
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
