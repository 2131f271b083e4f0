/** The daemon's permission set (scripts/permissions.sh) refuses everything outside its scope. */
import assert from "node:assert/strict";
import { daemonFlags } from "../_helpers/permissions.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("the permission set has no -A, run, ffi or unscoped read/write/env/sys", async () => {
  const flags = await daemonFlags("/d", "/f");
  for (const f of flags) {
    assert.doesNotMatch(
      f,
      /^(-A|--allow-all|--allow-run|--allow-ffi|--allow-read|--allow-write|--allow-env|--allow-sys)$/,
    );
  }
  assert.ok(flags.includes("--allow-read=/d,/f,/etc/machine-id"));
  assert.ok(flags.includes("--allow-write=/d,/f"));
});

Deno.test("license key files (run from source) are readable, and nothing else is added", async () => {
  const flags = await daemonFlags("/d", "/f", "/keys/a.pem,/keys/b.pem");
  assert.ok(flags.includes("--allow-read=/d,/f,/etc/machine-id,/keys/a.pem,/keys/b.pem"));
  assert.ok(flags.includes("--allow-write=/d,/f"));
  const env = flags.find((f) => f.startsWith("--allow-env="))!;
  assert.ok(env.split(/[=,]/).includes("EDGE_LICENSE_TRUSTED_KEYS"));
});

Deno.test("a read or write outside the data dir is refused with a clear NotCapable error", async () => {
  await using tmp = await makeTempDir("perm");
  const flags = await daemonFlags(tmp.path, `${tmp.path}/files`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, `${ROOT}tests/packaging/fixtures/permission_probe.ts`, tmp.path],
    env: { EDGE_PROFILE: "probe" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /write inside: allowed/);
  assert.match(text, /read inside: allowed/);
  assert.match(text, /read outside: NotCapable: Requires read access to "\/etc\/passwd"/);
  assert.match(
    text,
    /write outside: NotCapable: Requires write access to "\/tmp\/edge-permission-probe.txt"/,
  );
  assert.match(text, /env outside the list: NotCapable: Requires env access to "HOME"/);
  assert.match(text, /env inside the list: allowed/);
  assert.match(text, /run a program: NotCapable: Requires run access/);
  assert.match(text, /file-type import: allowed/);
});

Deno.test("the permission set turns Deno's QUIC on and lets the daemon bind its UDP endpoint", async () => {
  await using tmp = await makeTempDir("perm-quic");
  const flags = await daemonFlags(tmp.path, `${tmp.path}/files`);
  assert.ok(flags.includes("--unstable-net"), "the direct path over QUIC (docs/p2p.md)");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, `${ROOT}tests/packaging/fixtures/quic_probe.ts`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.match(
    new TextDecoder().decode(out.stdout),
    /quic endpoint: bound/,
    new TextDecoder().decode(out.stderr),
  );
});
