/**
 * The shape of one CLI command (an entry of the command table, one file each under commands/)
 * and the context a command runs with.
 */
import type { OptionSpec, OptionValues } from "./args.ts";
import type { Output } from "./output.ts";
import type { HttpSettings, RpcClient } from "./rpc_client.ts";

/** One form of a command with subcommands (e.g. `license activate <url>`). */
export interface CommandForm {
  /** Usage after the program name, e.g. `license activate <url>`. */
  readonly usage: string;
  /** The HTTP request(s) this form makes. */
  readonly http: string;
  readonly summary: string;
}

/** An entry of the command table. */
export interface Command {
  /** The word that selects the command. */
  readonly name: string;
  /** Usage after the program name, e.g. `send <chat> <text>`. */
  readonly usage: string;
  /** One-line description for the command list. */
  readonly summary: string;
  /** The HTTP request(s) this command makes (every command has one, docs/contract.md §1.1). */
  readonly http: string;
  /** Further help text shown by `<command> --help`. */
  readonly details?: string;
  /** Options of this command (global options are always accepted too). */
  readonly options?: readonly OptionSpec[];
  /** How many positionals the command takes (max may be Infinity). */
  readonly args: { readonly min: number; readonly max: number };
  /** Timeout used when `--timeout` is not given (default 30000 ms). */
  readonly defaultTimeoutMs?: number;
  /** Subcommand forms, for commands such as `license`. */
  readonly forms?: readonly CommandForm[];
  /** Runs the command and resolves to its exit code; absent for `serve` (run by main.ts). */
  readonly run?: (ctx: CommandContext) => Promise<number>;
}

/** What a command gets: its arguments, the client, the printer and the stop signal. */
export interface CommandContext {
  /** Positionals after the command name. */
  readonly positionals: readonly string[];
  /** Values of the command's own options. */
  readonly options: OptionValues;
  /** HTTP settings (base URL, timeout, signal) for commands that go beyond /rpc. */
  readonly http: HttpSettings;
  readonly rpc: RpcClient;
  /** The data directory named by the global `--accounts DIR`, if given. */
  readonly accounts?: string;
  readonly out: Output;
  /** Fires on Ctrl-C/SIGTERM (or the embedder's signal). */
  readonly signal: AbortSignal;
  /** Reads an environment variable (undefined when unset or not permitted). */
  readonly env: (name: string) => string | undefined;
}

/** Reads a string option (undefined when absent). */
export function stringOption(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.options[name];
  return typeof v === "string" ? v : undefined;
}

/** Reads a repeatable option (empty when absent). */
export function listOption(ctx: CommandContext, name: string): readonly string[] {
  const v = ctx.options[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
}
