/**
 * The backup key: Argon2id (hash-wasm) over the passphrase and the file's salt, with the cost
 * recorded in the header; 64 bytes out, split into the AES-256-GCM key and a passphrase check.
 */
import { argon2id } from "hash-wasm";

/** Argon2id cost, as the header records it. */
export interface KdfParams {
  /** Memory in KiB. */
  readonly memoryKiB: number;
  readonly iterations: number;
  readonly parallelism: number;
}

/**
 * The cost used for new backups, sized for a 512 MB box (docs/backup.md#key-derivation): 64 MiB
 * and 3 passes (RFC 9106's second recommended setting, at one lane since the WebAssembly code
 * runs on one thread), about 0.3 s on an x86 core and a few seconds on a Raspberry Pi class CPU.
 */
export const DEFAULT_KDF: KdfParams = Object.freeze({
  memoryKiB: 64 * 1024,
  iterations: 3,
  parallelism: 1,
});

/**
 * The most a header may ask for: a damaged or hostile header must not make the reader allocate
 * more than a 512 MB box can spare, nor spin for minutes.
 */
export const KDF_LIMITS = Object.freeze({
  maxMemoryKiB: 256 * 1024,
  maxIterations: 16,
  maxParallelism: 8,
});

/** Salt length in bytes. */
export const SALT_BYTES = 16;

/** What the passphrase gives: the cipher key and the check value stored in the header. */
export interface DerivedKey {
  readonly key: CryptoKey;
  readonly check: Uint8Array;
}

/** Whether `p` lies within what Argon2id accepts and `KDF_LIMITS` allows. */
export function kdfParamsAcceptable(p: KdfParams): boolean {
  return p.parallelism >= 1 && p.parallelism <= KDF_LIMITS.maxParallelism &&
    p.iterations >= 1 && p.iterations <= KDF_LIMITS.maxIterations &&
    p.memoryKiB >= 8 * p.parallelism && p.memoryKiB <= KDF_LIMITS.maxMemoryKiB;
}

/** Derives the cipher key and the passphrase check from `passphrase` and `salt`. */
export async function deriveBackupKey(
  passphrase: string,
  salt: Uint8Array,
  params: KdfParams,
): Promise<DerivedKey> {
  const out = await argon2id({
    password: passphrase,
    salt,
    parallelism: params.parallelism,
    iterations: params.iterations,
    memorySize: params.memoryKiB,
    hashLength: 64,
    outputType: "binary",
  });
  const key = await crypto.subtle.importKey("raw", out.slice(0, 32), "AES-GCM", false, [
    "encrypt",
    "decrypt",
  ]);
  const check = out.slice(32);
  out.fill(0);
  return { key, check };
}
