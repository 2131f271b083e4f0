/**
 * `deno task license-keys`: writes src/license/trusted_keys.ts from license-keys/*.pem (each an
 * Ed25519 public key in SPKI PEM form); `--check` only reports whether the file is up to date.
 */
import { assertEd25519Spki } from "../src/license/spki.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const KEYS_DIR = "license-keys";
const OUT = "src/license/trusted_keys.ts";

/** The `.pem` files of license-keys/ (sorted), as `{name, pem}` with `name` relative to the repo. */
export async function readKeyFiles(root: string): Promise<{ name: string; pem: string }[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(`${root}${KEYS_DIR}`)) {
    if (e.isFile && e.name.endsWith(".pem")) names.push(e.name);
  }
  names.sort();
  const out = [];
  for (const n of names) {
    const pem = (await Deno.readTextFile(`${root}${KEYS_DIR}/${n}`)).trim() + "\n";
    try {
      await assertEd25519Spki(pem);
    } catch (err) {
      throw new Error(`${KEYS_DIR}/${n} is not an Ed25519 public key in SPKI PEM form`, {
        cause: err,
      });
    }
    out.push({ name: `${KEYS_DIR}/${n}`, pem });
  }
  return out;
}

/** The text of trusted_keys.ts for these keys (formatted as `deno fmt` leaves it). */
export function renderTrustedKeys(keys: readonly { name: string; pem: string }[]): string {
  const head = `/**
 * The license signing keys every gateway trusts; a compiled binary trusts only these. Generated
 * by \`deno task license-keys\` (compile.sh runs it) from ${KEYS_DIR}/*.pem: do not edit.
 */

/** A built-in public key: its source file and its SPKI PEM text. */
export interface BuiltInKey {
  readonly name: string;
  readonly pem: string;
}

`;
  if (keys.length === 0) {
    return `${head}export const BUILT_IN_LICENSE_KEYS: readonly BuiltInKey[] = [];\n`;
  }
  const items = keys.map((k) =>
    `  {\n    name: ${JSON.stringify(k.name)},\n    pem: ${JSON.stringify(k.pem)},\n  },\n`
  ).join("");
  return `${head}export const BUILT_IN_LICENSE_KEYS: readonly BuiltInKey[] = [\n${items}];\n`;
}

if (import.meta.main) {
  const keys = await readKeyFiles(ROOT);
  const text = renderTrustedKeys(keys);
  const current = await Deno.readTextFile(`${ROOT}${OUT}`).catch(() => "");
  const n = keys.length;
  if (Deno.args.includes("--check")) {
    if (current !== text) {
      console.error(`${OUT} is out of date with ${KEYS_DIR}/: run deno task license-keys`);
      Deno.exit(1);
    }
    console.log(`${OUT} is up to date (${n} key(s))`);
  } else {
    if (current !== text) await Deno.writeTextFile(`${ROOT}${OUT}`, text);
    console.log(`${OUT}: ${n} license signing key(s) from ${KEYS_DIR}/`);
  }
}
