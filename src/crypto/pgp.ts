/**
 * Thin wrapper over OpenPGP.js for chat mail: encrypt to every recipient plus self and sign,
 * with anonymous (wildcard) key IDs as Delta Chat writes them; decrypt first, then verify against
 * the key the decrypted MIME names (the sender's key travels inside the encrypted part). No step
 * depends on this device's clock agreeing with a key's or a signature's times. Pure.
 */
import * as openpgp from "openpgp";
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
  let decrypted: openpgp.Message<Uint8Array>;
  try {
    const message = await openpgp.readMessage({ binaryMessage: ciphertext });
    const symmetric = passwords.length > 0 &&
      message.packets.filterByTag(openpgp.enums.packet.symEncryptedSessionKey).length > 0;
    decrypted = await message.decrypt(
      symmetric ? undefined : [key],
      symmetric ? [...passwords] : undefined,
      undefined,
      // No date: our own key decrypts whatever this device's clock says about its binding.
      null as unknown as Date,
      { ...openpgp.config, maxDecompressedMessageSize: maxBytes },
    );
  } catch (cause) {
    throw new PgpError(`cannot decrypt: ${(cause as Error).message}`, { cause });
  }
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
