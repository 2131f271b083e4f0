/**
 * Everything the CLI prints: the I/O seam (`CliIo`), tables, key/value lists, `--json` output,
 * and the human labels of docs/contract.md §3 (message state symbols, connectivity levels, chat
 * types).
 */
import { ChatType, MessageState } from "../constants.ts";

/** Where the CLI writes and what it may read; tests and embedders can pass their own. */
export interface CliIo {
  /** Writes text to standard output as-is (callers add newlines). */
  stdout(text: string): Promise<void>;
  /** Writes text to standard error as-is. */
  stderr(text: string): Promise<void>;
  /** Reads an environment variable; the CLI only asks for EDGE_URL, EDGE_TOKEN and their PRIVITTY_ twins. */
  env(name: string): string | undefined;
  /** Ends long-running commands (`events`) early; Ctrl-C/SIGTERM are used when absent. */
  signal?: AbortSignal;
  /** Whether standard error is a terminal (progress bars are drawn only there); default no. */
  stderrIsTerminal?: () => boolean;
}

/** The process's own stdout/stderr and environment. */
export function denoIo(): CliIo {
  return {
    stdout: (text) => writeAll(Deno.stdout, text),
    stderr: (text) => writeAll(Deno.stderr, text),
    env: (name) => {
      try {
        return Deno.env.get(name);
      } catch {
        return undefined; // no env permission: behave as unset
      }
    },
    stderrIsTerminal: () => Deno.stderr.isTerminal(),
  };
}

async function writeAll(w: { write(p: Uint8Array): Promise<number> }, text: string) {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await w.write(bytes));
}

/** Printing helpers bound to one invocation's I/O and `--json` setting. */
export class Output {
  readonly #io: CliIo;
  /** True under `--json`. */
  readonly json: boolean;

  constructor(io: CliIo, json: boolean) {
    this.#io = io;
    this.json = json;
  }

  /** Prints one line on stdout. */
  async line(text = ""): Promise<void> {
    await this.#io.stdout(text + "\n");
  }

  /** Prints one line on stderr. */
  async error(text: string): Promise<void> {
    await this.#io.stderr(text + "\n");
  }

  /** True when progress may be drawn: stderr is a terminal and the output is not `--json`. */
  get drawsProgress(): boolean {
    return !this.json && (this.#io.stderrIsTerminal?.() ?? false);
  }

  /** Redraws the progress line on stderr (`done`: ends it with a newline). */
  async progress(text: string, done = false): Promise<void> {
    await this.#io.stderr(`\r\x1b[2K${text}${done ? "\n" : ""}`);
  }

  /** Prints a value as one line of JSON on stdout. */
  async jsonLine(value: unknown): Promise<void> {
    await this.line(JSON.stringify(value ?? null));
  }

  /**
   * Prints an RPC result: under `--json` the raw result (`null` for an HTTP 204), otherwise
   * `human(value)` — which is skipped for a 204 (`undefined`), a method without a value.
   */
  async result<T>(value: T | undefined, human: (v: T) => Promise<void>): Promise<void> {
    if (this.json) return await this.jsonLine(value);
    if (value !== undefined) await human(value);
  }

  /** Prints any JSON value for humans: scalars as text, objects as key/value lines. */
  async value(value: unknown): Promise<void> {
    if (value === null || value === undefined) return;
    if (typeof value === "object" && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return await this.keyValues(entries.map(([k, v]) => [k, scalarText(v)]));
    }
    await this.line(Array.isArray(value) ? JSON.stringify(value, null, 2) : scalarText(value));
  }

  /** Prints `key: value` lines with the values aligned. */
  async keyValues(entries: readonly (readonly [string, string])[]): Promise<void> {
    const width = Math.max(0, ...entries.map(([k]) => displayWidth(k)));
    for (const [k, v] of entries) await this.line(`${pad(k + ":", width + 1)} ${v}`);
  }

  /** Prints a table with a header row; columns are padded to their widest cell. */
  async table(headers: readonly string[], rows: readonly (readonly string[])[]): Promise<void> {
    for (const line of formatTable(headers, rows)) await this.line(line);
  }
}

/** Renders a table as lines, separating columns with two spaces and trimming the line end. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string[] {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => displayWidth(r[c] ?? ""))));
  return all.map((r) => r.map((cell, c) => pad(cell ?? "", widths[c])).join("  ").trimEnd());
}

/** Text of a JSON value inside a table cell or key/value line. */
export function scalarText(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Collapses line breaks so a message text stays on one table row. */
export function oneLine(text: string): string {
  return text.replace(/\r?\n/g, " ↵ ");
}

function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - displayWidth(text)));
}

/** Approximate terminal width: wide East Asian characters and emoji count as two columns. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 0xfe0f || cp === 0x200d || (cp >= 0x300 && cp <= 0x36f)) continue;
    const wide = (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) || cp >= 0x20000;
    width += wide ? 2 : 1;
  }
  return width;
}

/**
 * CLI symbol of a message state (docs/contract.md §3.1): ✓ sent, ✓✓ delivered, 👁 read, … pending.
 */
export function stateSymbol(state: unknown): string {
  switch (state) {
    case MessageState.PENDING:
      return "…";
    case MessageState.FAILED:
      return "✗";
    case MessageState.DELIVERED_TO_SERVER:
      return "✓";
    case MessageState.DELIVERED_TO_DEVICE:
      return "✓✓";
    case MessageState.READ:
      return "👁";
    default:
      return ""; // fresh (1), seen (16) and unknown states have no symbol
  }
}

/** Human label of a connectivity level (docs/contract.md §3.2). */
export function connectivityLabel(level: number): string {
  if (level <= 0) return "not configured";
  if (level < 2000) return "not connected";
  if (level < 3000) return "connecting";
  if (level < 4000) return "connected (working)";
  return "fully connected";
}

/** Human name of a chat type (docs/contract.md §2). */
export function chatTypeName(type: unknown): string {
  switch (type) {
    case ChatType.SINGLE:
      return "1:1";
    case ChatType.GROUP:
      return "group";
    case ChatType.BROADCAST:
      return "broadcast";
    default:
      return scalarText(type);
  }
}

/** Formats Unix seconds as `YYYY-MM-DD HH:MM` in UTC (empty for a missing time). */
export function formatTime(seconds: unknown): string {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return "";
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
}
