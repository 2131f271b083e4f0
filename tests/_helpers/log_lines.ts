/**
 * Reading a daemon's output as log lines (src/log.ts's format): lines that are not log records,
 * the per-mail `[receive] mail processed` INFO lines with their fields, and the SecureJoin steps
 * they name.
 */

/** `<ISO time> <LEVEL> [scope] message fields…` as src/log.ts writes it. */
export const LOG_LINE =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (DEBUG|INFO |WARN |ERROR) \[[\w-]+\] /;

/** Non-empty lines of `output` that are not log records. */
export function strayLines(output: string): string[] {
  return output.split("\n").filter((l) => l.trim() !== "" && !LOG_LINE.test(l));
}

/** The `mail processed` INFO lines: one per mail reception handled. */
export function mailProcessedLines(output: string): { line: string; uid: number }[] {
  return output.split("\n")
    .filter((l) => / INFO {2}\[receive\] mail processed /.test(l))
    .map((line) => ({ line, uid: Number(/ uid=(\d+)/.exec(line)?.[1] ?? NaN) }));
}

/** The SecureJoin steps the daemon received, in order (from its `mail processed` lines). */
export function secureJoinStepsReceived(output: string): string[] {
  return mailProcessedLines(output)
    .map(({ line }) => / outcome="securejoin" step="([\w-]+)"/.exec(line)?.[1])
    .filter((s): s is string => s !== undefined);
}
