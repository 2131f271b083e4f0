/** Tests of program_name.ts: which role each name the program may be invoked as selects. */
import assert from "node:assert/strict";
import { roleOf } from "../src/program_name.ts";

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
