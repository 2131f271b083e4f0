/**
 * Thin wrapper over OpenPGP.js for chat mail: encrypt to every recipient plus self and sign,
 * with anonymous (wildcard) key IDs as Delta Chat writes them; decrypt first, then verify against
 * the key the decrypted MIME names (the sender's key travels inside the encrypted part). No step
 * depends on this device's clock agreeing with a key's or a signature's times. Pure.
 */
import { createHash, type Hash } from "node:crypto";
import * as openpgp from "openpgp";
import { concatBytes } from "../bytes.ts";
import { encryptionDate, signingDate } from "./key_times.ts";
import { checkSignatures, type SignatureCheck, signedParts } from "./signature_check.ts";

/** Decompressed plaintext limit: Delta Chat compresses with ZLIB, so a bomb is a real risk. */
export const MAX_PLAINTEXT_BYTES = 64 * 1024 * 1024;

/** A message that could not be decrypted or verified; the message says why. */
export class PgpError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PgpError";
  }
}

/** Reads a binary transferable public key (Autocrypt keydata). */
export async function readPublicKey(binary: Uint8Array): Promise<openpgp.PublicKey> {
  try {
    return await openpgp.readKey({ binaryKey: binary });
  } catch (cause) {
    throw new PgpError("not a usable OpenPGP public key", { cause });
  }
}

/** Reads the stored armored private key. */
export async function readPrivateKey(armored: string): Promise<openpgp.PrivateKey> {
  return await openpgp.readPrivateKey({ armoredKey: armored });
}

/** Upper-case hex fingerprint, Delta Chat's spelling. */
export function fingerprintOf(key: openpgp.Key): string {
  return key.getFingerprint().toUpperCase();
}

/**
 * Encrypts `plaintext` (binary literal data) to `recipients` and self, signed by `signingKey`.
 * The signature is dated `now` but never before the signing key was made; recipients' keys are
 * checked at `now` or at their own newest time when that is later (see key_times.ts).
 */
export async function encryptAndSign(p: {
  plaintext: Uint8Array;
  recipients: readonly openpgp.PublicKey[];
  signingKey: openpgp.PrivateKey;
  compress?: boolean;
  /** Unix ms (default `Date.now()`). */
  now?: number;
}): Promise<Uint8Array> {
  const now = p.now ?? Date.now();
  const encryptionKeys = [...p.recipients, p.signingKey.toPublic()];
  const signed = await openpgp.sign({
    message: await openpgp.createMessage({ binary: p.plaintext, date: new Date(now) }),
    signingKeys: p.signingKey,
    date: signingDate(p.signingKey, now),
    format: "object",
  });
  return await openpgp.encrypt({
    message: signed,
    encryptionKeys,
    wildcard: true,
    date: encryptionDate(encryptionKeys, now),
    format: "binary",
    ...(p.compress
      ? { config: { preferredCompressionAlgorithm: openpgp.enums.compression.zlib } }
      : {}),
  }) as Uint8Array;
}

/** What a signature packet can take at most (RSA 8192 and every subpacket we write). */
const SIGNATURE_BOUND = 2048;
/** A public-key encrypted session key packet at most, per key (RSA 8192 with headers). */
const PKESK_BOUND = 1100;
/** Packet headers, one-pass signature, IV/salt, MDC or final AEAD tag, literal header: fixed. */
const FRAME_BOUND = 512;

/**
 * An upper bound of the binary message `encryptAndSign` (or, with `compressed`, a compressed
 * message such as a channel post) makes of `plaintextBytes` bytes for `keys` encrypting keys or
 * passwords (recipients plus self). Size is linear in the plaintext: partial body lengths cost at
 * most a byte per 512 bytes for each nested packet streamed, AEAD at most 16 bytes per
 * 64 KiB chunk (OpenPGP.js uses 256 KiB), compression of incompressible data at most a byte per
 * KiB; the rest is bounded per key and per message.
 */
export function encryptedLengthBound(
  plaintextBytes: number,
  keys: number,
  compressed = false,
): number {
  const p = plaintextBytes;
  const partial = (compressed ? 3 : 2) * Math.ceil(p / 512);
  const aead = 16 * Math.ceil(p / 65_536);
  const zlib = compressed ? Math.ceil(p / 1024) + 64 : 0;
  return p + partial + aead + zlib + FRAME_BOUND + SIGNATURE_BOUND + PKESK_BOUND * keys;
}

/** openpgp.readMessage, failing as PgpError. */
async function readOrFail<T extends Uint8Array | ReadableStream<Uint8Array>>(
  options: { binaryMessage: T; config?: Partial<openpgp.Config> },
): Promise<openpgp.Message<T>> {
  try {
    return await openpgp.readMessage(options);
  } catch (cause) {
    throw new PgpError(`cannot decrypt: ${(cause as Error).message}`, { cause });
  }
}

/**
 * Decrypts `message` with `key`, or, when it has a password-encrypted session key and passwords
 * are given (a channel post), with one of `passwords`; failing as PgpError. No date: our own key
 * decrypts whatever this device's clock says about its binding.
 */
async function decryptWith<T extends Uint8Array | ReadableStream<Uint8Array>>(
  message: openpgp.Message<T>,
  key: openpgp.PrivateKey,
  passwords: readonly string[],
  config: openpgp.Config,
): Promise<openpgp.Message<T>> {
  const symmetric = passwords.length > 0 &&
    message.packets.filterByTag(openpgp.enums.packet.symEncryptedSessionKey).length > 0;
  try {
    return await message.decrypt(
      symmetric ? undefined : [key],
      symmetric ? [...passwords] : undefined,
      undefined,
      null as unknown as Date,
      config,
    );
  } catch (cause) {
    throw new PgpError(`cannot decrypt: ${(cause as Error).message}`, { cause });
  }
}

/** A decrypted message whose signature is checked separately (see `verify`). */
export interface Decrypted {
  readonly plaintext: Uint8Array;
  /**
   * Checks the signatures against `keys` whatever their creation times (signature_check.ts): the
   * signer's primary fingerprint when one is valid, else why none is.
   */
  verify(keys: readonly openpgp.PublicKey[]): Promise<SignatureCheck>;
}

/**
 * Decrypts a binary message with `key`, or, for a message with a password-encrypted session key
 * (a channel post), with one of `passwords`; throws PgpError (wrong key, tampering, too large).
 */
export async function decryptMessage(
  ciphertext: Uint8Array,
  key: openpgp.PrivateKey,
  maxBytes = MAX_PLAINTEXT_BYTES,
  passwords: readonly string[] = [],
): Promise<Decrypted> {
  const decrypted = await decryptWith(
    await readOrFail({ binaryMessage: ciphertext }),
    key,
    passwords,
    { ...openpgp.config, maxDecompressedMessageSize: maxBytes },
  );
  const data = decrypted.getLiteralData();
  if (!(data instanceof Uint8Array)) throw new PgpError("cannot decrypt: literal data is a stream");
  const plaintext = data;
  let checked = false;
  return {
    plaintext,
    async verify(keys) {
      if (checked) throw new PgpError("verify() may be called once per decrypted message");
      checked = true;
      const { signatures, literal } = await signedParts(decrypted as openpgp.Message<Uint8Array>);
      if (literal === undefined) throw new PgpError("cannot verify: no literal data");
      return await checkSignatures(signatures, literal, keys);
    },
  };
}

/** A message being decrypted as a stream; its signatures can be checked once `data` ended. */
export interface DecryptingStream {
  /**
   * The plaintext (literal data). It errors at its end when the message was tampered with or cut
   * short, so nothing read from it may be used before it ended without error.
   */
  readonly data: ReadableStream<Uint8Array>;
  /**
   * After `data` was read to its end: checks the signatures against `keys` as
   * {@link Decrypted.verify} does. Once per message.
   */
  verify(keys: readonly openpgp.PublicKey[]): Promise<SignatureCheck>;
}

/** OpenPGP.js's packet fields the streamed signature check relies on. */
interface StreamedSignature {
  version: number;
  hashAlgorithm: number;
  signatureType: number | null;
  salt?: Uint8Array | null;
  signatureData?: Uint8Array;
  /** A digest set beforehand makes OpenPGP.js's `verify` use it instead of hashing the data. */
  hashed?: Promise<Uint8Array>;
  calculateTrailer(data: unknown, detached: boolean): unknown;
}

/** Node's names of the OpenPGP hash algorithms a signature may use (RFC 9580 §9.5). */
const HASH_NAMES: Readonly<Record<number, string>> = {
  [openpgp.enums.hash.sha1]: "sha1",
  [openpgp.enums.hash.sha224]: "sha224",
  [openpgp.enums.hash.sha256]: "sha256",
  [openpgp.enums.hash.sha384]: "sha384",
  [openpgp.enums.hash.sha512]: "sha512",
  [openpgp.enums.hash.sha3_256]: "sha3-256",
  [openpgp.enums.hash.sha3_512]: "sha3-512",
};

/** Bytes OpenPGP.js hands as a Uint8Array or as a (short) stream, as one Uint8Array. */
async function bytesOf(value: unknown): Promise<Uint8Array> {
  if (value instanceof Uint8Array) return value;
  if (!(value instanceof ReadableStream)) throw new PgpError("cannot verify: unexpected data");
  const parts: Uint8Array[] = [];
  const reader = (value as ReadableStream<Uint8Array>).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
  return concatBytes(parts);
}

/** The packets a packet list's stream still holds (after a one-pass signed literal: its signatures). */
async function trailing(list: openpgp.PacketList<openpgp.AnyPacket>): Promise<unknown[]> {
  const stream = (list as { stream?: unknown }).stream;
  if (!(stream instanceof ReadableStream)) return [];
  const out: unknown[] = [];
  const reader = stream.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}

/** A running hash of the literal data for the signatures of one algorithm (and v6 salt). */
interface DataHash {
  readonly algorithm: number;
  readonly salt: Uint8Array;
  readonly hash: Hash;
}

function saltOf(sig: StreamedSignature): Uint8Array {
  return sig.version === 6 && sig.salt ? sig.salt : new Uint8Array();
}

/**
 * Decrypts a binary message read from `ciphertext` as {@link decryptMessage} does, but as a
 * stream: the plaintext is not buffered (not even until the integrity check, which then fails
 * the stream at its end), and the literal data is hashed as it flows for the signatures announced
 * before it (one-pass or leading signatures; a text-mode signature, which hashes normalized line
 * ends, is not checked here and fails). Throws PgpError when the message cannot be opened.
 */
export async function decryptStream(
  ciphertext: ReadableStream<Uint8Array>,
  key: openpgp.PrivateKey,
  maxBytes = MAX_PLAINTEXT_BYTES,
  passwords: readonly string[] = [],
): Promise<DecryptingStream> {
  const config = {
    ...openpgp.config,
    // Counted below instead: OpenPGP.js fails a streamed decompression with a rejection that
    // nothing can catch (the process would die of it); the data stream's own count fails cleanly.
    maxDecompressedMessageSize: Infinity,
    // Plaintext flows before the integrity check; the caller uses none of it before the end.
    allowUnauthenticatedStream: true,
  };
  const decrypted = await decryptWith(
    await readOrFail({ binaryMessage: ciphertext, config }),
    key,
    passwords,
    config,
  );
  const inner = decrypted.unwrapCompressed();
  const literal = inner.packets.filterByTag(openpgp.enums.packet.literalData)[0] as
    | openpgp.LiteralDataPacket
    | undefined;
  if (literal === undefined) throw new PgpError("cannot decrypt: no literal data");
  const leading = inner.packets.filterByTag(
    openpgp.enums.packet.signature,
  ) as unknown as StreamedSignature[];
  const announced = [
    ...leading,
    ...inner.packets.filterByTag(
      openpgp.enums.packet.onePassSignature,
    ) as unknown as StreamedSignature[],
  ];
  const hashes: DataHash[] = [];
  for (const sig of announced) {
    const name = HASH_NAMES[sig.hashAlgorithm];
    const salt = saltOf(sig);
    if (name === undefined) continue; // no valid signature can use it: it fails as unknown
    if (hashes.some((h) => h.algorithm === sig.hashAlgorithm && equalBytes(h.salt, salt))) {
      continue;
    }
    hashes.push({ algorithm: sig.hashAlgorithm, salt, hash: createHash(name).update(salt) });
  }
  let after: unknown[] = [];
  let size = 0;
  const data = (decrypted.getLiteralData() as ReadableStream<Uint8Array>).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBytes) {
          throw new PgpError(`cannot decrypt: the plaintext is larger than ${maxBytes} bytes`);
        }
        for (const h of hashes) h.hash.update(chunk);
        controller.enqueue(chunk);
      },
      // The packets after the literal data, then the rest of the decrypted stream: the integrity
      // check (MDC or AEAD tag) fails there, so the data ends with that error, not before it.
      async flush() {
        try {
          after = await trailing(inner.packets);
          if (inner !== decrypted) await trailing(decrypted.packets);
        } catch (cause) {
          throw new PgpError(`cannot decrypt: ${(cause as Error).message}`, { cause });
        }
      },
    }),
  );
  let checked = false;
  return {
    data,
    async verify(keys) {
      if (checked) throw new PgpError("verify() may be called once per decrypted message");
      checked = true;
      const signatures = leading.length > 0
        ? leading
        : after.filter((p) =>
          p instanceof openpgp.SignaturePacket
        ) as unknown as StreamedSignature[];
      for (const sig of signatures) sig.hashed = digestFor(sig, hashes, literal);
      return await checkSignatures(
        signatures as unknown as openpgp.SignaturePacket[],
        literal,
        keys,
      );
    },
  };
}

/** The digest a signature signs: the hashed data, then its own hashed fields and trailer. */
function digestFor(
  sig: StreamedSignature,
  hashes: readonly DataHash[],
  literal: openpgp.LiteralDataPacket,
): Promise<Uint8Array> {
  const running = hashes.find((h) =>
    h.algorithm === sig.hashAlgorithm && equalBytes(h.salt, saltOf(sig))
  );
  const fail = (why: string) => {
    const rejected = Promise.reject<Uint8Array>(new Error(why));
    rejected.catch(() => {}); // read by `verify`, which reports it
    return rejected;
  };
  if (running === undefined || sig.signatureData === undefined) {
    return fail("its hash algorithm was not announced before the data");
  }
  if (sig.signatureType !== openpgp.enums.signature.binary) {
    return fail("only binary signatures are checked on a streamed message");
  }
  const final = running.hash.copy();
  final.update(sig.signatureData);
  const digest = bytesOf(sig.calculateTrailer(literal, false)).then((trailer) => {
    final.update(trailer);
    return new Uint8Array(final.digest());
  });
  digest.catch(() => {});
  return digest;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
