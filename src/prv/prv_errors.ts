/**
 * Typed errors of the `.prv` container (docs/prv-format.md): `PrvError` when a file cannot be
 * opened or decrypted (`/stream` answers 500), `PrvSourceError` when a plaintext source did not
 * deliver the bytes the writer was told to expect.
 */
import { GatewayError } from "../errors.ts";

/** Why a `.prv` file was rejected; one value per check of the reader. */
export const PrvErrorReason = {
  /** The first 8 bytes are not the `.prv` magic. */
  BAD_MAGIC: "bad_magic",
  /** A `.prv` of a version this build does not read. */
  UNSUPPORTED_VERSION: "unsupported_version",
  /** Suite, chunk size, flags, header length or a reserved field differ from v1, or too short. */
  BAD_HEADER: "bad_header",
  /** The header MAC does not verify: the wrong key, or an altered header. */
  HEADER_AUTH_FAILED: "header_auth_failed",
  /** The file size is not one a v1 writer produces (cut inside a chunk or a tag). */
  BAD_SIZE: "bad_size",
  /** A chunk does not decrypt at its position: altered, reordered, duplicated or truncated. */
  CHUNK_AUTH_FAILED: "chunk_auth_failed",
  /** The file got shorter while it was being read. */
  TRUNCATED: "truncated",
} as const;
export type PrvErrorReason = typeof PrvErrorReason[keyof typeof PrvErrorReason];

/** A `.prv` file could not be opened or decrypted; `reason` says which check failed. */
export class PrvError extends GatewayError {
  readonly reason: PrvErrorReason;
  constructor(reason: PrvErrorReason, message: string, options?: ErrorOptions) {
    super(`Cannot decrypt protected file: ${message}`, undefined, options);
    this.reason = reason;
  }
}

/** The plaintext source ended early or went on past the size it was checked to have. */
export class PrvSourceError extends GatewayError {
  constructor(message: string, options?: ErrorOptions) {
    super(`Cannot protect file: ${message}`, undefined, options);
  }
}
