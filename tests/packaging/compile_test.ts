/**
 * compile.sh embeds the license keys of license-keys/ and fails with a clear message when the
 * Deno runtime (denort) cannot be obtained.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function compile(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}compile.sh`, ...args],
    env: { DENO: Deno.execPath(), NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
  };
}

Deno.test("compile.sh names the missing runtime and how to provide it when offline", async () => {
  // The test runner's network namespace reaches nothing but loopback.
  const r = await compile(
    { DENO_DIR: "/tmp/edge-no-deno-dir" },
    "--target",
    "aarch64-unknown-linux-gnu",
  );
  assert.notEqual(r.code, 0);
  assert.match(r.text, /cannot get the Deno runtime \(denort\) for aarch64-unknown-linux-gnu/);
  assert.match(r.text, /DENORT_BIN=\/path\/to\/denort/);
  // Before building: trusted_keys.ts from license-keys/ (the repository ships no key).
  assert.match(
    r.text,
    /src\/license\/trusted_keys\.ts: 0 license signing key\(s\) from license-keys\//,
  );
  assert.match(r.text, /license-keys\/ holds no public key, so the binary accepts no license/);
});

Deno.test("compile.sh rejects a DENORT_BIN that is not an executable file", async () => {
  const r = await compile(
    { DENORT_BIN: "/nonexistent/denort" },
    "--target",
    "x86_64-unknown-linux-gnu",
  );
  assert.notEqual(r.code, 0);
  assert.match(
    r.text,
    /DENORT_BIN for x86_64-unknown-linux-gnu is "\/nonexistent\/denort", which is not an executable file/,
  );
});

Deno.test("compile.sh refuses one DENORT_BIN for two targets and unknown targets", async () => {
  assert.match((await compile({ DENORT_BIN: "/bin/true" })).text, /one runtime for one target/);
  assert.match((await compile({}, "--target", "mips")).text, /unsupported target mips/);
});
