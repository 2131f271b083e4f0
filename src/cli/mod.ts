/**
 * The command-line client: `runCli` parses arguments, runs one command of the table against the
 * daemon over HTTP, and maps every failure to an exit code (0 ok, 1 RPC error, 2 usage,
 * 3 unreachable, 4 license required). main.ts calls it for every first argument but `serve`.
 */
import { DEFAULT_URL, GATEWAY_VERSION } from "../constants.ts";
import { editDistance, type OptionSpec, parseArgs, parseBaseUrl, UsageError } from "./args.ts";
import type { Command, CommandContext } from "./command.ts";
import { COMMANDS, findCommand } from "./commands/mod.ts";
import { commandHelp, globalHelp, PROG } from "./help.ts";
import { type CliIo, denoIo, Output } from "./output.ts";
import { CliFailure } from "./offline_license.ts";
import { ProtocolError, RpcClient, RpcError, UnreachableError } from "./rpc_client.ts";

export { COMMANDS } from "./commands/mod.ts";
export type { Command, CommandForm } from "./command.ts";
export type { CliIo } from "./output.ts";
export { PROG } from "./help.ts";

/** Exit codes of the CLI. */
export const ExitCode = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  UNREACHABLE: 3,
  LICENSE_REQUIRED: 4,
  INTERRUPTED: 130,
} as const;

/** Timeout of one request when neither --timeout nor the command sets one. */
export const DEFAULT_TIMEOUT_MS = 30_000;

const HELP = "help";

/** True when `name` is a command `runCli` runs (every table entry but `serve`, plus `help`). */
export function isCliCommand(name: string): boolean {
  if (name === HELP) return true;
  return findCommand(name)?.run !== undefined;
}

/**
 * Runs the CLI with `args` (the command name first, options anywhere) and resolves to the exit
 * code. Output goes to `io` (the process's stdout/stderr by default); the only environment
 * variables read are EDGE_URL, EDGE_TOKEN and their product twins PRIVITTY_URL, PRIVITTY_TOKEN,
 * and `backup`'s EDGE_BACKUP_PASSPHRASE (or PRIVITTY_BACKUP_PASSPHRASE).
 */
export async function runCli(args: readonly string[], io: CliIo = denoIo()): Promise<number> {
  const stderr = new Output(io, false);
  let command: Command | undefined;
  let json = false;
  try {
    const parsed = parseArgs(args, optionsFor);
    const { global } = parsed;
    json = global.json;
    const out = new Output(io, global.json);
    if (global.version) {
      await out.line(`${PROG} ${GATEWAY_VERSION}`);
      return ExitCode.OK;
    }
    if (parsed.commandName === HELP) return await printHelp(out, parsed.positionals);
    command = parsed.commandName === undefined ? undefined : findCommand(parsed.commandName);
    if (global.help) {
      await out.line(command === undefined ? globalHelp(COMMANDS) : commandHelp(command));
      return ExitCode.OK;
    }
    if (command === undefined) {
      await stderr.error(globalHelp(COMMANDS));
      await stderr.error(`\n${PROG}: missing command`);
      return ExitCode.USAGE;
    }
    const run = command.run;
    if (run === undefined) {
      throw new UsageError(
        `'${command.name}' runs the daemon and must be the first argument: ${PROG} ${command.usage}`,
      );
    }
    checkArgCount(command, parsed.positionals.length);
    const base = global.url !== undefined ? parseBaseUrl(global.url, "--url") : envBaseUrl(io);
    const timeoutMs = global.timeoutMs ?? command.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    return await withStopSignal(io.signal, async (signal) => {
      const token = global.token ?? envToken(io);
      const http = { baseUrl: base, timeoutMs, signal, ...(token === undefined ? {} : { token }) };
      const ctx: CommandContext = {
        positionals: parsed.positionals,
        options: parsed.options,
        http,
        rpc: new RpcClient(http),
        ...(global.accounts === undefined ? {} : { accounts: global.accounts }),
        out,
        signal,
        env: (name) => io.env(name),
      };
      try {
        return await run(ctx);
      } catch (err) {
        if (signal.aborted && !(err instanceof UsageError)) return ExitCode.INTERRUPTED;
        throw err;
      }
    });
  } catch (err) {
    return await reportFailure(io, json, err, command);
  }
}

/** The gateway address from EDGE_URL, else its product twin PRIVITTY_URL, else the default. */
function envBaseUrl(io: CliIo): string {
  const edge = io.env("EDGE_URL");
  if (edge) return parseBaseUrl(edge, "EDGE_URL");
  const product = io.env("PRIVITTY_URL");
  if (product) return parseBaseUrl(product, "PRIVITTY_URL (twin of EDGE_URL)");
  return parseBaseUrl(DEFAULT_URL, "EDGE_URL");
}

/** The API token from EDGE_TOKEN, else its product twin PRIVITTY_TOKEN; undefined when unset. */
function envToken(io: CliIo): string | undefined {
  return io.env("EDGE_TOKEN") || io.env("PRIVITTY_TOKEN") || undefined;
}

function optionsFor(name: string): readonly OptionSpec[] {
  if (name === HELP) return [];
  const command = findCommand(name);
  if (command !== undefined) return command.options ?? [];
  const names = COMMANDS.map((c) => c.name);
  const close = names.filter((n) => n.startsWith(name) || editDistance(n, name) <= 2);
  const hint = close.length > 0
    ? ` (did you mean ${close.map((n) => `'${n}'`).join(" or ")}?)`
    : "";
  throw new UsageError(`unknown command '${name}'${hint}; run '${PROG} --help' for the list`);
}

async function printHelp(out: Output, topics: readonly string[]): Promise<number> {
  if (topics.length === 0) {
    await out.line(globalHelp(COMMANDS));
    return ExitCode.OK;
  }
  if (topics.length > 1) {
    throw new UsageError(`'help' takes one command name, got ${topics.length}`);
  }
  const command = findCommand(topics[0]);
  if (command === undefined) {
    optionsFor(topics[0]); // throws "unknown command" unless it is 'help' itself
    await out.line(globalHelp(COMMANDS));
  } else {
    await out.line(commandHelp(command));
  }
  return ExitCode.OK;
}

function checkArgCount(command: Command, count: number): void {
  const { min, max } = command.args;
  if (count < min) {
    const required = command.usage.split(" ").slice(1).filter((w) => !w.startsWith("["));
    const missing = required.slice(count).join(" ") || "an argument";
    throw new UsageError(`'${command.name}' is missing ${missing}`, command.name);
  }
  if (count > max) {
    const expected = max === 0 ? "no arguments" : `at most ${max} argument${max > 1 ? "s" : ""}`;
    throw new UsageError(`'${command.name}' takes ${expected}, got ${count}`, command.name);
  }
}

/** Runs `body` with a signal that fires on Ctrl-C/SIGTERM (or the embedder's signal). */
async function withStopSignal<T>(
  given: AbortSignal | undefined,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (given !== undefined) return await body(given);
  const controller = new AbortController();
  const stop = () => controller.abort();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const installed = signals.filter((s) => {
    try {
      Deno.addSignalListener(s, stop);
      return true;
    } catch {
      return false; // e.g. SIGTERM on Windows
    }
  });
  try {
    return await body(controller.signal);
  } finally {
    for (const s of installed) Deno.removeSignalListener(s, stop);
  }
}

async function reportFailure(
  io: CliIo,
  json: boolean,
  err: unknown,
  command: Command | undefined,
): Promise<number> {
  const stderr = new Output(io, false);
  if (err instanceof UsageError) {
    const shown = err.command === undefined ? command : findCommand(err.command);
    await stderr.error(`${PROG}: ${err.message}`);
    if (shown !== undefined) {
      await stderr.error(`usage: ${PROG} ${shown.usage}`);
      await stderr.error(`Run '${PROG} ${shown.name} --help' for details.`);
    }
    return ExitCode.USAGE;
  }
  if (err instanceof RpcError) {
    if (json) await stderr.error(JSON.stringify(err.toJSON()));
    else {await stderr.error(
        `${PROG}: ${err.method} failed: ${withoutPrefix(err)} (code ${err.code})`,
      );}
    return err.licenseRequired ? ExitCode.LICENSE_REQUIRED : ExitCode.ERROR;
  }
  if (err instanceof UnreachableError) {
    await stderr.error(`${PROG}: ${err.message}`);
    return ExitCode.UNREACHABLE;
  }
  if (err instanceof CliFailure) {
    await stderr.error(`${PROG}: ${err.message}`);
    return ExitCode.ERROR;
  }
  if (err instanceof Deno.errors.BrokenPipe) return ExitCode.OK; // stdout reader went away
  const message = err instanceof ProtocolError
    ? err.message
    : `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
  await stderr.error(`${PROG}: ${message}`);
  return ExitCode.ERROR;
}

/** The daemon's message without a leading `<method>: ` (the CLI line names the method already). */
function withoutPrefix(err: RpcError): string {
  const prefix = `${err.method}: `;
  return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
}
