/**
 * Tests of main.ts: the program started under the product's names (a symlink to deno named
 * privitty-edged / privitty-edge: argv[0] is what main.ts reads) is the daemon or the CLI.
 */
import assert from "node:assert/strict";
import { makeTempDir } from "./_helpers/temp.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Runs main.ts through a symlink to deno called `name`, and returns its exit code and output. */
async function runAs(name: string, args: string[]): Promise<{ code: number; out: string }> {
  await using tmp = await makeTempDir("progname");
  const link = `${tmp.path}/${name}`;
  await Deno.symlink(Deno.execPath(), link);
  const res = await new Deno.Command(link, {
    args: [
      "run",
      "--frozen",
      "--no-prompt",
      "--allow-env",
      "--allow-read",
      `${ROOT}main.ts`,
      ...args,
    ],
    env: { NO_COLOR: "1", EDGE_URL: "http://127.0.0.1:9" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: res.code, out: dec.decode(res.stdout) + dec.decode(res.stderr) };
}

Deno.test("invoked as privitty-edged the program is the daemon, as privitty-edge the CLI", async () => {
  const daemon = await runAs("privitty-edged", ["--help"]);
  assert.equal(daemon.code, 0, daemon.out);
  assert.match(daemon.out, /also: privitty-edged \[options\]/);
  const daemonBad = await runAs("privitty-edged", ["invite"]);
  assert.equal(daemonBad.code, 2, "privitty-edged never runs CLI commands");
  assert.match(daemonBad.out, /unexpected argument "invite"/);
  const conflict = await runAs("privitty-edged", ["--listen", "0.0.0.0:7200", "--port", "7200"]);
  assert.equal(conflict.code, 2);
  assert.match(conflict.out, /--listen and --port both set the listen address/);

  const cli = await runAs("privitty-edge", ["--help"]);
  assert.equal(cli.code, 0, cli.out);
  assert.match(cli.out, /usage: edge-gateway \[global options\] <command>/);
  const cliFlags = await runAs("privitty-edge", ["--accounts", "/var/lib/privitty"]);
  assert.equal(cliFlags.code, 2, "privitty-edge never runs the daemon");
  assert.match(cliFlags.out, /missing command/);

  const neutral = await runAs("edge-gateway", ["--listen", "0.0.0.0:7200", "--port", "1"]);
  assert.equal(neutral.code, 2, "edge-gateway with daemon flags runs the daemon");
  assert.match(neutral.out, /--listen and --port both set/);
});
