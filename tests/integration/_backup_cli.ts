/** Runs the CLI from source through scripts/cli.sh (its own narrow permissions), as `deno task cli` does. */
const ROOT = new URL("../../", import.meta.url).pathname;

/** A finished CLI run. */
export interface ShRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `bash scripts/cli.sh ARGS` with `env` added; relative paths are taken from the repository. */
export async function cliSh(args: readonly string[], env: Record<string, string>): Promise<ShRun> {
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}scripts/cli.sh`, ...args],
    cwd: ROOT,
    env: { DENO: Deno.execPath(), NO_COLOR: "1", INIT_CWD: ROOT, ...env },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
