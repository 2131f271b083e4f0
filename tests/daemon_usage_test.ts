/** `serve --help` (SERVE_USAGE) names every daemon flag and environment variable the daemon reads. */
import assert from "node:assert/strict";
import { DAEMON_ENV_VARS, SERVE_FLAGS } from "../src/config.ts";
import { SERVE_USAGE } from "../src/daemon.ts";

Deno.test("SERVE_USAGE lists every serve flag and every environment input", () => {
  for (const flag of [...SERVE_FLAGS.values, ...SERVE_FLAGS.booleans]) {
    assert.match(SERVE_USAGE, new RegExp(`^  --${flag}\\b`, "m"), `--${flag} has its own line`);
  }
  for (const name of DAEMON_ENV_VARS) {
    assert.match(SERVE_USAGE, new RegExp(`^  ${name}\\b`, "m"), `${name} has its own line`);
  }
});
