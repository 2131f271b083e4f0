/**
 * Entry point of the edge messaging gateway: `serve` (the default) runs the daemon, any other
 * first argument is a CLI command that talks to a running daemon over HTTP.
 */
import "./src/env_shim.ts";
import { isCliCommand, runCli } from "./src/cli/mod.ts";
import { runDaemon, SERVE_USAGE } from "./src/daemon.ts";

/** Runs the program with `args` and resolves to its exit code. */
export async function main(args: readonly string[]): Promise<number> {
  const [first, ...rest] = args;
  if (first === "serve") return await serve(rest);
  if (first === undefined || (first.startsWith("--") && !isGlobalCliFlag(first))) {
    return await serve(args);
  }
  if (isCliCommand(first) || isGlobalCliFlag(first) || first === "-h") {
    return await runCli([...args]);
  }
  return await runCli([...args]);
}

function isGlobalCliFlag(arg: string): boolean {
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
