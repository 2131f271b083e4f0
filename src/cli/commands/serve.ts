/**
 * `serve`: listed in the command table for help and docs/cli.md only; main.ts runs the daemon
 * itself, so this entry has no `run`.
 */
import type { Command } from "../command.ts";

/** The `serve` command (run by main.ts, not by the CLI). */
export const serve: Command = {
  name: "serve",
  usage:
    "serve [--port P] [--host H] [--data-dir D] [--cors[=ORIGINS]] (or --listen HOST:PORT --accounts D)",
  summary: "run the gateway daemon (the default when no command is given)",
  http: "serves POST /rpc, GET /events, GET /health, POST /auth, GET /stream/:msg_id",
  details: "Run 'edge-gateway serve --help' for every daemon option and environment variable.",
  args: { min: 0, max: Infinity },
};
