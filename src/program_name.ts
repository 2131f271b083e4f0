/**
 * The names the program answers to: the product's `privitty-edged` (always the daemon) and
 * `privitty-edge` (always the CLI), and the neutral `edge-gateway` (daemon or CLI by arguments).
 */
import process from "node:process";

/** Program names, as the product publishes them (contract P-01, P-02) and our own. */
export const ProgramName = {
  DAEMON: "privitty-edged",
  CLI: "privitty-edge",
  NEUTRAL: "edge-gateway",
} as const;

/** What a name makes the program do. */
export type ProgramRole = "daemon" | "cli" | "any";

/**
 * The role of a program invoked as `invokedAs` (a path or a name). A name counts when it is the
 * product's name itself or followed by `-` or `.` (`privitty-edged-x86_64-unknown-linux-gnu`).
 */
export function roleOf(invokedAs: string): ProgramRole {
  const base = invokedAs.slice(invokedAs.lastIndexOf("/") + 1);
  const named = (name: string) =>
    base === name || base.startsWith(`${name}-`) || base.startsWith(`${name}.`);
  if (named(ProgramName.DAEMON)) return "daemon";
  if (named(ProgramName.CLI)) return "cli";
  return "any";
}

/**
 * The name this process was started as: `argv[0]` (a symlink's own name, the name `docker exec`
 * was given), which needs no permission; `deno run main.ts` reports `deno` here.
 */
export function invokedName(): string {
  return process.argv0;
}
