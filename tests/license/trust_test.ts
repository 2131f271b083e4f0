/**
 * Tests of the trust boundary: built-in keys always, EDGE_LICENSE_TRUSTED_KEYS files only when
 * run from source (never in a compiled binary), and clear errors for unusable key files.
 */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import { isCompiledBinary, loadTrustedKeys } from "../../src/license/trust.ts";
import { BUILT_IN_LICENSE_KEYS } from "../../src/license/trusted_keys.ts";
import { setLogSink } from "../../src/log.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { testKey } from "./_tokens.ts";

Deno.test("isCompiledBinary() is false when run from source (deno test, deno run)", () => {
  assert.equal(Deno.build.standalone, false);
  assert.equal(isCompiledBinary(), false);
});

Deno.test("loadTrustedKeys() from source trusts the built-in keys and the named files", async () => {
  await using tmp = await makeTempDir("keys");
  const built = await testKey("built");
  const extra = await testKey("extra");
  await Deno.writeTextFile(`${tmp.path}/dev.pem`, extra.pem);
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    const keys = await loadTrustedKeys({
      extraKeyFiles: [`${tmp.path}/dev.pem`],
      compiled: false,
      builtIn: [{ name: "license-keys/prod.pem", pem: built.pem }],
    });
    assert.deepEqual(keys.map((k) => [k.name, k.keyId]), [
      ["built-in key license-keys/prod.pem", built.trusted.keyId],
      [`${tmp.path}/dev.pem`, extra.trusted.keyId],
    ]);
    assert.ok(
      lines.some((l) => l.includes("trusting license keys from EDGE_LICENSE_TRUSTED_KEYS")),
    );
  } finally {
    setLogSink(prev);
  }
});

Deno.test("loadTrustedKeys() in a compiled binary ignores EDGE_LICENSE_TRUSTED_KEYS entirely", async () => {
  const built = await testKey("built");
  let reads = 0;
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    const keys = await loadTrustedKeys({
      extraKeyFiles: ["/attacker/key.pem"],
      compiled: true,
      builtIn: [{ name: "license-keys/prod.pem", pem: built.pem }],
      readTextFile: () => {
        reads++;
        return Promise.resolve("");
      },
    });
    assert.deepEqual(keys.map((k) => k.keyId), [built.trusted.keyId]);
    assert.equal(reads, 0, "the file is not even read");
    assert.ok(lines.some((l) => l.includes("EDGE_LICENSE_TRUSTED_KEYS is ignored")));
  } finally {
    setLogSink(prev);
  }
});

Deno.test("loadTrustedKeys() stops the start naming an unreadable or non-key file", async () => {
  await using tmp = await makeTempDir("keys");
  await assert.rejects(
    loadTrustedKeys({ extraKeyFiles: [`${tmp.path}/missing.pem`], compiled: false, builtIn: [] }),
    (err: Error) =>
      err instanceof StartupError &&
      err.message.startsWith(
        `cannot read the license key file ${tmp.path}/missing.pem named by EDGE_LICENSE_TRUSTED_KEYS`,
      ),
  );
  await Deno.writeTextFile(`${tmp.path}/junk.pem`, "hello");
  await assert.rejects(
    loadTrustedKeys({ extraKeyFiles: [`${tmp.path}/junk.pem`], compiled: false, builtIn: [] }),
    /EDGE_LICENSE_TRUSTED_KEYS: .*junk\.pem is not an Ed25519 public key in SPKI PEM form/,
  );
});

Deno.test("the default built-in set is trusted_keys.ts, generated from license-keys/", async () => {
  const keys = await loadTrustedKeys({ extraKeyFiles: [], compiled: true });
  assert.equal(keys.length, BUILT_IN_LICENSE_KEYS.length);
});
