/**
 * Leveled logging to stderr, one line per record. Never pass tokens, passwords, keys or
 * plaintext to it: callers log identifiers and sizes only.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

let threshold: LogLevel = "info";
let sink: (line: string) => void = (line) => console.error(line);

/** Sets the minimum level written (`EDGE_LOG_LEVEL` feeds this at start). */
export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

/** Replaces the output sink (tests capture lines with this). Returns the previous sink. */
export function setLogSink(next: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = next;
  return prev;
}

/** Parses a level name; returns undefined when it is not one. */
export function parseLogLevel(value: string): LogLevel | undefined {
  return value in ORDER ? value as LogLevel : undefined;
}

function write(level: LogLevel, scope: string, msg: string, fields?: Record<string, unknown>) {
  if (ORDER[level] < ORDER[threshold]) return;
  const extra = fields
    ? " " + Object.entries(fields).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")
    : "";
  const line = `${new Date().toISOString()} ${
    level.toUpperCase().padEnd(5)
  } [${scope}] ${msg}${extra}`;
  try {
    sink(line);
  } catch {
    // A log line that cannot be written (stderr on a full disk, a closed pipe) is dropped: the
    // daemon never stops for its log.
  }
}

/** A logger bound to one scope (a module or subsystem name). */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Returns a logger whose lines carry `[scope]`. */
export function logger(scope: string): Logger {
  return {
    debug: (m, f) => write("debug", scope, m, f),
    info: (m, f) => write("info", scope, m, f),
    warn: (m, f) => write("warn", scope, m, f),
    error: (m, f) => write("error", scope, m, f),
  };
}
