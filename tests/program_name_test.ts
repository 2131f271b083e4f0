/** Tests of program_name.ts: which program a name, and for the neutral name the arguments, select. */
import assert from "node:assert/strict";
import { roleOf, runsDaemon } from "../src/program_name.ts";

Deno.test("roleOf() reads the product's daemon and CLI names, with paths and target suffixes", () => {
  const cases: [string, string][] = [
    ["privitty-edged", "daemon"],
    ["/usr/local/bin/privitty-edged", "daemon"],
    ["dist/privitty-edged-x86_64-unknown-linux-gnu", "daemon"],
    ["privitty-edge", "cli"],
    ["/usr/local/bin/privitty-edge", "cli"],
    ["./privitty-edge-aarch64-unknown-linux-gnu", "cli"],
    ["privitty-edge.exe", "cli"],
    ["edge-gateway", "any"],
    ["/edge-gateway", "any"],
    ["deno", "any"],
    ["/root/.npm/_npx/x/node_modules/deno/deno", "any"],
    ["privitty-edgex", "any"],
    ["my-privitty-edge", "any"],
  ];
  for (const [name, role] of cases) assert.equal(roleOf(name), role, name);
});

Deno.test("runsDaemon(): no arguments or daemon flags only run the daemon, a command the CLI", () => {
  const daemon = [
    [],
    ["--listen", "0.0.0.0:7200", "--accounts", "/var/lib/privitty", "--cors"],
    ["--port", "7200", "--host", "127.0.0.1", "--data-dir", "/d"],
    ["--listen=[::1]:7200", "--accounts=/var/lib/privitty"],
    ["--accounts", "/var/lib/privitty"],
    ["--bogus"], // the daemon explains its unknown option
  ];
  for (const args of daemon) assert.equal(runsDaemon(args), true, args.join(" "));
  const cli = [
    ["invite"],
    ["--accounts", "/var/lib/privitty", "license", "status"],
    ["--url", "http://127.0.0.1:7200", "health"],
    ["--json"],
    ["--help"],
    ["-h"],
    ["--version"],
    ["--timeout", "5", "info"],
    ["--cors", "bogus"], // the CLI explains the unknown command
  ];
  for (const args of cli) assert.equal(runsDaemon(args), false, args.join(" "));
});
