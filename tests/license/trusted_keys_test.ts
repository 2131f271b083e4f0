/** trusted_keys.ts is exactly what `deno task license-keys` writes from license-keys/. */
import assert from "node:assert/strict";
import { readKeyFiles, renderTrustedKeys } from "../../scripts/license_keys.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { testKey } from "./_tokens.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("src/license/trusted_keys.ts is up to date with license-keys/", async () => {
  const expected = renderTrustedKeys(await readKeyFiles(ROOT));
  assert.equal(await Deno.readTextFile(`${ROOT}src/license/trusted_keys.ts`), expected);
});

Deno.test("renderTrustedKeys() embeds each key's name and PEM as a module", async () => {
  const key = await testKey();
  const text = renderTrustedKeys([{ name: "license-keys/a.pem", pem: key.pem }]);
  const url = `data:application/typescript;base64,${btoa(text)}`;
  const mod = await import(url);
  assert.deepEqual(mod.BUILT_IN_LICENSE_KEYS, [{ name: "license-keys/a.pem", pem: key.pem }]);
});

Deno.test("readKeyFiles() takes the .pem files in name order and names one that is no key", async () => {
  await using tmp = await makeTempDir("keysdir");
  await Deno.mkdir(`${tmp.path}/license-keys`);
  const a = await testKey();
  const b = await testKey();
  await Deno.writeTextFile(`${tmp.path}/license-keys/b.pem`, b.pem);
  await Deno.writeTextFile(`${tmp.path}/license-keys/a.pem`, a.pem);
  await Deno.writeTextFile(`${tmp.path}/license-keys/README.md`, "not a key");
  const keys = await readKeyFiles(`${tmp.path}/`);
  assert.deepEqual(keys.map((k) => k.name), ["license-keys/a.pem", "license-keys/b.pem"]);
  await Deno.writeTextFile(
    `${tmp.path}/license-keys/c.pem`,
    "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
  );
  await assert.rejects(
    readKeyFiles(`${tmp.path}/`),
    /license-keys\/c\.pem is not an Ed25519 public key in SPKI PEM form/,
  );
});
