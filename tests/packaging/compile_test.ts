/**
 * compile.sh: clear messages when the Deno runtime (denort) is missing, the product names beside
 * the binary, and the license keys of license-keys/ embedded before every build.
 */
import assert from "node:assert/strict";
import { makeTempDir } from "../_helpers/temp.ts";

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

Deno.test("compile.sh puts the product's names beside the binary as symlinks to it", async () => {
  await using tmp = await makeTempDir("compile");
  // A stand-in for deno: answers --version and info, and "compiles" by writing a script.
  const fake = `${tmp.path}/deno`;
  await Deno.writeTextFile(
    fake,
    `#!/usr/bin/env bash
case "$1" in
  --version) echo "deno 2.9.5 (fake)" ;;
  info) echo "DENO_DIR location: ${tmp.path}/deno-dir" ;;
  compile) while [ $# -gt 0 ]; do [ "$1" = --output ] && out="$2"; shift; done
    printf '#!/bin/sh\\necho built\\n' > "$out"; chmod +x "$out" ;;
esac
`,
  );
  await Deno.chmod(fake, 0o755);
  const dist = `${tmp.path}/dist`;
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}compile.sh`, "--target", "x86_64-unknown-linux-gnu"],
    env: { DENO: fake, DENORT_BIN: "/bin/true", DIST_DIR: dist, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const t = "x86_64-unknown-linux-gnu";
  assert.ok(Deno.lstatSync(`${dist}/edge-gateway-${t}`).isFile);
  for (const name of ["privitty-edged", "privitty-edge"]) {
    assert.ok(Deno.lstatSync(`${dist}/${name}-${t}`).isSymlink, name);
    assert.equal(Deno.readLinkSync(`${dist}/${name}-${t}`), `edge-gateway-${t}`);
  }
});
