/**
 * Entry point of the edge messaging gateway. Invoked as `privitty-edged` it is the daemon, as
 * `privitty-edge` the CLI; as `edge-gateway` (or `deno run main.ts`) `serve`, no arguments or
 * daemon flags only run the daemon, and a command runs the CLI against a running daemon.
 */
import "./src/env_shim.ts";
import { runCli } from "./src/cli/mod.ts";
import { runDaemon, SERVE_USAGE } from "./src/daemon.ts";
import { invokedName, roleOf, runsDaemon } from "./src/program_name.ts";

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
