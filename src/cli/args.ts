/**
 * Command-line parsing for the CLI: global and per-command options, positionals, and the
 * `UsageError` (exit code 2) whose message says exactly what is wrong.
 */

/** A usage mistake: unknown command or option, a missing or malformed argument. Exit code 2. */
export class UsageError extends Error {
  /** The command whose usage should be shown with the message, when known. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}

/** How an option takes values: a flag, one value, or a value that may be repeated. */
export type OptionKind = "boolean" | "string" | "list";

/** One `--name` option of the CLI or of a command. */
export interface OptionSpec {
  /** Long name without the leading dashes. */
  readonly name: string;
  /** Optional one-letter alias, used as `-x`. */
  readonly short?: string;
  readonly kind: OptionKind;
  /** Placeholder of the value in help texts, e.g. `ID`. */
  readonly value?: string;
  readonly help: string;
}

/** Parsed option values keyed by long name; lists collect every occurrence in order. */
export type OptionValues = Readonly<Record<string, string | boolean | readonly string[]>>;

/** Options accepted before and after every command. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  {
    name: "url",
    kind: "string",
    value: "URL",
    help: "gateway address (env EDGE_URL, default http://127.0.0.1:7200)",
  },
  {
    name: "token",
    kind: "string",
    value: "TOKEN",
    help: "API token, when the gateway requires one (env EDGE_TOKEN; prefer the env: " +
      "arguments show in the process list)",
  },
  {
    name: "json",
    kind: "boolean",
    help: "print the raw JSON-RPC result (errors: the JSON-RPC error object on stderr)",
  },
  {
    name: "timeout",
    kind: "string",
    value: "MS",
    help: "per-request timeout in milliseconds (default 30000, health 3000; 0 = none)",
  },
  {
    name: "accounts",
    kind: "string",
    value: "DIR",
    help: "the gateway's data directory (the product's global option): license commands read " +
      "it when no daemon answers",
  },
  { name: "help", short: "h", kind: "boolean", help: "show help (also: <command> --help)" },
  { name: "version", kind: "boolean", help: "print the version and exit" },
];

/** Global options after parsing. */
export interface GlobalOptions {
  readonly url: string | undefined;
  /** `--token`: the API token sent to /rpc and /events. */
  readonly token: string | undefined;
  readonly json: boolean;
  readonly timeoutMs: number | undefined;
  /** `--accounts DIR`: the data directory license commands fall back to without a daemon. */
  readonly accounts: string | undefined;
  readonly help: boolean;
  readonly version: boolean;
}

/** The result of `parseArgs`. */
export interface ParsedArgs {
  /** The first positional argument, if any. */
  readonly commandName: string | undefined;
  /** Positionals after the command name. */
  readonly positionals: readonly string[];
  /** Values of the command's own options. */
  readonly options: OptionValues;
  readonly global: GlobalOptions;
}

/**
 * Splits `argv` into command, positionals, command options and global options. Options may come
 * before or after the command; `--` ends option parsing. `optionsFor` returns the options of a
 * command, or undefined when there is no such command (a UsageError).
 */
export function parseArgs(
  argv: readonly string[],
  optionsFor: (command: string) => readonly OptionSpec[] | undefined,
): ParsedArgs {
  let commandName: string | undefined;
  let specs: readonly OptionSpec[] = GLOBAL_OPTIONS;
  const positionals: string[] = [];
  const values: Record<string, string | boolean | string[]> = {};
  let onlyPositionals = false;

  const addPositional = (arg: string) => {
    if (commandName !== undefined) {
      positionals.push(arg);
      return;
    }
    const own = optionsFor(arg);
    if (own === undefined) throw new UsageError(unknownCommandMessage(arg));
    commandName = arg;
    specs = [...GLOBAL_OPTIONS, ...own];
  };

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (onlyPositionals || !isOptionLike(arg)) {
      addPositional(arg);
      continue;
    }
    if (arg === "--") {
      onlyPositionals = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const key = eq === -1 ? arg : arg.slice(0, eq);
    const spec = findOption(specs, key);
    if (spec === undefined) {
      const where = commandName === undefined ? "" : ` for '${commandName}'`;
      throw new UsageError(
        `unknown option '${key}'${where} (put '--' before arguments that start with '-')`,
        commandName,
      );
    }
    if (spec.kind === "boolean") {
      if (eq !== -1) throw new UsageError(`option --${spec.name} takes no value`, commandName);
      values[spec.name] = true;
      continue;
    }
    let value: string;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else {
      if (i + 1 >= argv.length) {
        throw new UsageError(`option --${spec.name} needs a value (${spec.value})`, commandName);
      }
      value = argv[++i];
    }
    if (spec.kind === "list") {
      const prev = values[spec.name];
      values[spec.name] = Array.isArray(prev) ? [...prev, value] : [value];
    } else {
      values[spec.name] = value;
    }
  }

  const options: Record<string, string | boolean | readonly string[]> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!GLOBAL_OPTIONS.some((g) => g.name === name)) options[name] = value;
  }
  return { commandName, positionals, options, global: readGlobals(values, commandName) };
}

function readGlobals(
  values: Record<string, string | boolean | string[]>,
  command: string | undefined,
): GlobalOptions {
  const url = values["url"];
  const token = values["token"];
  const timeout = values["timeout"];
  const accounts = values["accounts"];
  return {
    url: typeof url === "string" ? url : undefined,
    token: typeof token === "string" && token !== "" ? token : undefined,
    json: values["json"] === true,
    timeoutMs: typeof timeout === "string" ? parseTimeout(timeout, command) : undefined,
    accounts: typeof accounts === "string" ? parseAccountsDir(accounts, command) : undefined,
    help: values["help"] === true,
    version: values["version"] === true,
  };
}

function isOptionLike(arg: string): boolean {
  return arg.length > 1 && arg.startsWith("-") && !/^-\d/.test(arg);
}

function findOption(specs: readonly OptionSpec[], key: string): OptionSpec | undefined {
  if (key.startsWith("--")) return specs.find((s) => s.name === key.slice(2));
  if (key.length === 2) return specs.find((s) => s.short === key[1]);
  return undefined;
}

function unknownCommandMessage(name: string): string {
  return `unknown command '${name}'`;
}

function parseTimeout(text: string, command: string | undefined): number {
  if (!/^\d+$/.test(text)) {
    throw new UsageError(
      `--timeout needs a whole number of milliseconds (0 = none), got '${text}'`,
      command,
    );
  }
  return Number(text);
}

function parseAccountsDir(text: string, command: string | undefined): string {
  if (!text.startsWith("/")) {
    throw new UsageError(`--accounts needs an absolute directory path, got '${text}'`, command);
  }
  return text.length > 1 ? text.replace(/\/+$/, "") : text;
}

/** Parses a chat, message or contact id: an unsigned 32-bit integer greater than 0. */
export function parseId(text: string, what: string, command?: string): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n > 0 && n <= 0xffff_ffff) return n;
  }
  throw new UsageError(`${what} must be a positive integer id, got '${text}'`, command);
}

/**
 * Validates the gateway address (from --url or EDGE_URL) and returns it without a trailing
 * slash. Only http: and https: URLs are accepted.
 */
export function parseBaseUrl(text: string, source: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${source} is not a valid URL: '${text}' (expected http://host:port)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${source} must be an http:// or https:// URL, got '${text}'`);
  }
  if (url.search !== "" || url.hash !== "") {
    throw new UsageError(`${source} must not have a query or fragment, got '${text}'`);
  }
  return url.href.replace(/\/+$/, "");
}

/** Edit distance of two short strings, for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length];
}
