/**
 * Which license signing keys this gateway trusts: the built-in ones (trusted_keys.ts) always;
 * the files named by EDGE_LICENSE_TRUSTED_KEYS only when run from source, never in a compiled
 * binary, so an operator's environment or data directory cannot bring its own trust anchor.
 */
import { StartupError } from "../errors.ts";
import { describeError } from "../errors.ts";
import { logger } from "../log.ts";
import { BUILT_IN_LICENSE_KEYS } from "./trusted_keys.ts";
import { importTrustedKey, type TrustedKey } from "./verify.ts";

const log = logger("license");

/** True in a binary built by `deno compile` (compile.sh): Deno sets `Deno.build.standalone`. */
export function isCompiledBinary(): boolean {
  return Deno.build.standalone === true;
}

/** Inputs of {@link loadTrustedKeys}; the defaults are this process's. */
export interface TrustOptions {
  /** Public-key files from EDGE_LICENSE_TRUSTED_KEYS (absolute or relative paths). */
  readonly extraKeyFiles: readonly string[];
  /** Default {@link isCompiledBinary}(). */
  readonly compiled?: boolean;
  /** Default the built-in keys of trusted_keys.ts. */
  readonly builtIn?: readonly { readonly name: string; readonly pem: string }[];
  readonly readTextFile?: (path: string) => Promise<string>;
}

/**
 * Imports the trusted keys. A built-in key that does not import is a build error; an extra key
 * file that cannot be read or is not an Ed25519 SPKI PEM stops the start with a StartupError
 * naming it (a developer asked for it explicitly).
 */
export async function loadTrustedKeys(options: TrustOptions): Promise<TrustedKey[]> {
  const compiled = options.compiled ?? isCompiledBinary();
  const keys: TrustedKey[] = [];
  for (const { name, pem } of options.builtIn ?? BUILT_IN_LICENSE_KEYS) {
    keys.push(await importTrustedKey(`built-in key ${name}`, pem));
  }
  if (options.extraKeyFiles.length > 0 && compiled) {
    log.warn(
      "EDGE_LICENSE_TRUSTED_KEYS is ignored: a compiled gateway trusts only its built-in " +
        "license keys",
      { built_in: keys.length },
    );
    return keys;
  }
  const read = options.readTextFile ?? Deno.readTextFile;
  for (const path of options.extraKeyFiles) {
    let pem: string;
    try {
      pem = await read(path);
    } catch (err) {
      throw new StartupError(
        `cannot read the license key file ${path} named by EDGE_LICENSE_TRUSTED_KEYS: ` +
          describeError(err),
        undefined,
        { cause: err },
      );
    }
    try {
      keys.push(await importTrustedKey(path, pem));
    } catch (err) {
      throw new StartupError(
        `EDGE_LICENSE_TRUSTED_KEYS: ${describeError(err)}`,
        undefined,
        { cause: err },
      );
    }
  }
  if (options.extraKeyFiles.length > 0) {
    log.info("trusting license keys from EDGE_LICENSE_TRUSTED_KEYS (run from source)", {
      files: options.extraKeyFiles.length,
      key_ids: keys.map((k) => k.keyId).join(","),
    });
  }
  return keys;
}
