/**
 * The license signing keys every gateway trusts; a compiled binary trusts only these. Generated
 * by `deno task license-keys` (compile.sh runs it) from license-keys/*.pem: do not edit.
 */

/** A built-in public key: its source file and its SPKI PEM text. */
export interface BuiltInKey {
  readonly name: string;
  readonly pem: string;
}

export const BUILT_IN_LICENSE_KEYS: readonly BuiltInKey[] = [];
