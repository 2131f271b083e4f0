/** trusted_keys.ts is exactly what `deno task license-keys` writes from license-keys/. */
import assert from "node:assert/strict";
import { readKeyFiles, renderTrustedKeys } from "../../scripts/license_keys.ts";
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
