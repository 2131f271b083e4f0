/**
 * The `.prv` container (docs/prv-format.md): a file encrypted under its own content key, written
 * atomically and read back at random offsets. This is the package's entry: code outside `src/prv/`
 * imports it from here only, and the package itself imports nothing above layer 0 (bytes, errors),
 * so it knows no PDU, grant, store or account (tests/architecture/imports_test.ts).
 */

// Geometry and the content key
export { CHUNK_SIZE, HEADER_SIZE, TAG_SIZE } from "./prv_format.ts";
export { CEK_SIZE } from "./prv_crypto.ts";

// Failures
export { PrvError, PrvErrorReason, PrvSourceError } from "./prv_errors.ts";

// Writing
export {
  encryptPrv,
  encryptToPrv,
  type PrvEncryption,
  type PrvEncryptOptions,
  type PrvFileEncryption,
  prvPathFor,
} from "./prv_encrypt.ts";
export type { OffsetReader, PlaintextSource } from "./plaintext_source.ts";
export { tempNameFor, writeAll } from "./atomic_file.ts";

// Reading
export {
  openPrv,
  openPrvFile,
  openPrvSource,
  openPrvWithHead,
  type PlainRange,
  type PrvReader,
  reopenPrv,
  type StreamOptions,
  type VerifiedPrv,
} from "./prv_reader.ts";
export { bytesSource, fileSource, type PrvSource } from "./prv_source.ts";

// Memory upkeep shared with other chunked AEAD streams (the backup file)
export { GC_HINT_CHUNKS, YoungGarbageHint } from "./gc_hint.ts";
