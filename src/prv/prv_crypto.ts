/**
 * The `.prv` v1 cryptography on WebCrypto (docs/prv-format.md, Keys and Chunks): keys derived
 * from the CEK with HKDF-SHA-256, the HMAC-SHA-256 header MAC, and AES-256-GCM chunk seal/open.
 */
import { PrvError, PrvErrorReason } from "./prv_errors.ts";
import { chunkNonce, HEADER_MAC_OFFSET, headerMacInput } from "./prv_format.ts";

/** Bytes of a content encryption key (AES-256). */
export const CEK_SIZE = 32;

const INFO_PAYLOAD = new TextEncoder().encode("emg-prv v1 payload");
const INFO_HEADER = new TextEncoder().encode("emg-prv v1 header");

/** The two keys of one file, derived from its CEK and salt; neither is extractable. */
export interface PrvKeys {
  /** AES-256-GCM key of the chunks. */
  readonly payload: CryptoKey;
  /** HMAC-SHA-256 key of the header MAC. */
  readonly header: CryptoKey;
}

/** A fresh random CEK (one per file, never reused). */
export function newCek(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(CEK_SIZE));
}

/** Derives the payload and header keys from `cek` (32 bytes) and the header's `salt`. */
export async function deriveKeys(cek: Uint8Array, salt: Uint8Array): Promise<PrvKeys> {
  if (cek.byteLength !== CEK_SIZE) {
    throw new RangeError(`a .prv content key is ${CEK_SIZE} bytes, got ${cek.byteLength}`);
  }
  const ikm = await crypto.subtle.importKey("raw", cek as BufferSource, "HKDF", false, [
    "deriveKey",
  ]);
  const hkdf = (info: Uint8Array) => ({
    name: "HKDF",
    hash: "SHA-256",
    salt: salt as BufferSource,
    info: info as BufferSource,
  });
  const [payload, header] = await Promise.all([
    crypto.subtle.deriveKey(hkdf(INFO_PAYLOAD), ikm, { name: "AES-GCM", length: 256 }, false, [
      "encrypt",
      "decrypt",
    ]),
    crypto.subtle.deriveKey(
      hkdf(INFO_HEADER),
      ikm,
      { name: "HMAC", hash: "SHA-256", length: 256 },
      false,
      ["sign", "verify"],
    ),
  ]);
  return { payload, header };
}

/** Writes the header MAC into bytes 56..87 of `header` (encoded by encodeHeader). */
export async function signHeader(keys: PrvKeys, header: Uint8Array): Promise<void> {
  const mac = await crypto.subtle.sign("HMAC", keys.header, headerMacInput(header) as BufferSource);
  header.set(new Uint8Array(mac), HEADER_MAC_OFFSET);
}

/** Checks the header MAC (constant time); throws PrvError `header_auth_failed`. */
export async function verifyHeader(keys: PrvKeys, header: Uint8Array): Promise<void> {
  const ok = await crypto.subtle.verify(
    "HMAC",
    keys.header,
    header.subarray(HEADER_MAC_OFFSET) as BufferSource,
    headerMacInput(header) as BufferSource,
  );
  if (!ok) {
    throw new PrvError(
      PrvErrorReason.HEADER_AUTH_FAILED,
      "the key does not open this file (a wrong key, or the header was altered)",
    );
  }
}

/** What identifies a chunk's place: the header (AAD, nonce prefix) and its index. */
export interface ChunkPlace {
  readonly header: Uint8Array;
  readonly noncePrefix: Uint8Array;
  readonly index: number;
  readonly last: boolean;
}

function gcm(place: ChunkPlace): AesGcmParams {
  return {
    name: "AES-GCM",
    iv: chunkNonce(place.noncePrefix, place.index, place.last) as BufferSource,
    additionalData: place.header as BufferSource,
    tagLength: 128,
  };
}

/** Encrypts one chunk's plaintext: ciphertext ‖ 16-byte tag. */
export async function sealChunk(
  keys: PrvKeys,
  place: ChunkPlace,
  plaintext: Uint8Array,
): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.encrypt(gcm(place), keys.payload, plaintext as BufferSource),
  );
}

/** Decrypts one chunk at its place; throws PrvError `chunk_auth_failed` when it does not fit. */
export async function openChunk(
  keys: PrvKeys,
  place: ChunkPlace,
  chunk: Uint8Array,
  chunkCount: number,
): Promise<Uint8Array> {
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(gcm(place), keys.payload, chunk as BufferSource),
    );
  } catch (cause) {
    throw new PrvError(
      PrvErrorReason.CHUNK_AUTH_FAILED,
      `chunk ${place.index} of ${chunkCount} does not authenticate ` +
        `(the file was altered, truncated or its chunks reordered)`,
      { cause },
    );
  }
}
