/**
 * Sign-then-encrypt of a message too large to hold in memory, in the shape `encryptAndSign` writes
 * (a one-pass signed binary literal in a SEIPD v1 packet with MDC, anonymous recipient key IDs).
 * OpenPGP.js buffers a whole streamed message for the MDC and for the signature (measured with
 * 6.3.2), so the framing is written here with definite lengths, and AES-256 in OpenPGP's CFB mode
 * (@noble/ciphers; Deno's node:crypto has no CFB) and the MDC's SHA-1 run as the bytes pass; OpenPGP.js makes the signature (over a stream it hashes as
 * it reads) and the session key packets. The plaintext is read twice: once to sign, once to
 * encrypt. Pure apart from randomness and reading the plaintext.
 */
import { createHash } from "node:crypto";
import { cfb } from "@noble/ciphers/aes.js";
import * as openpgp from "openpgp";
import { encryptionDate, signingDate } from "./key_times.ts";

/** A plaintext that can be read more than once, of a known length. */
export interface PlaintextSource {
  readonly bytes: number;
  /** A fresh stream of the same `bytes` bytes on every call. */
  open(): AsyncIterable<Uint8Array>;
}

/** A binary OpenPGP message being written: its exact length and its bytes. */
export interface EncryptedStream {
  readonly bytes: number;
  readonly chunks: AsyncIterable<Uint8Array>;
}

const TAG = { signature: 2, onePassSignature: 4, literal: 11, seipd: 18, mdc: 19 } as const;
const AES256_KEY_BYTES = 32;
const BLOCK = 16;
const MDC_BYTES = 2 + 20;
/** Literal data header fields: format 'b', empty file name, 4-byte date. */
const LITERAL_FIELDS = 6;

/** A new-format packet header (RFC 9580 §4.2.1) for a body of `length` bytes. */
export function packetHeader(tag: number, length: number): Uint8Array {
  const first = 0xc0 | tag;
  if (length < 192) return new Uint8Array([first, length]);
  if (length < 8384) {
    const l = length - 192;
    return new Uint8Array([first, (l >> 8) + 192, l & 0xff]);
  }
  const h = new Uint8Array(6);
  h[0] = first;
  h[1] = 0xff;
  new DataView(h.buffer).setUint32(2, length);
  return h;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

async function readAll(v: unknown): Promise<Uint8Array> {
  if (v instanceof Uint8Array) return v;
  return new Uint8Array(await new Response(v as ReadableStream<Uint8Array>).arrayBuffer());
}

/**
 * The signature packet over `plaintext` (binary document, SHA-256) by the signing key valid at
 * `date`, and the matching one-pass signature packet; the plaintext is hashed as it is read.
 */
async function signStream(
  plaintext: PlaintextSource,
  signingKey: openpgp.PrivateKey,
  date: Date,
): Promise<{ ops: Uint8Array; signature: Uint8Array }> {
  const signer = await signingKey.getSigningKey(undefined, date);
  const keyPacket = signer.keyPacket as openpgp.SecretKeyPacket;
  const algo = keyPacket.algorithm;
  const e = openpgp.enums.publicKey;
  if (algo !== e.eddsaLegacy && algo !== e.ed25519 && algo !== e.ed448) {
    // RSA and ECDSA in OpenPGP.js sign the data again rather than its digest.
    throw new Error("streamed signing needs an EdDSA key");
  }
  const sig = new openpgp.SignaturePacket();
  sig.signatureType = openpgp.enums.signature.binary;
  sig.publicKeyAlgorithm = algo;
  sig.hashAlgorithm = openpgp.enums.hash.sha256;
  // What SignaturePacket.sign reads of literal data: its bytes, not text.
  const literal = {
    text: null,
    getBytes: () => ReadableStream.from(plaintext.open()),
  } as unknown as Uint8Array;
  await (sig.sign as (
    k: openpgp.SecretKeyPacket,
    d: Uint8Array,
    date: Date,
    detached: boolean,
    c: openpgp.Config,
  ) => Promise<void>)(keyPacket, literal, date, false, openpgp.config);
  const s = sig as unknown as { params: unknown; signedHashValue: unknown };
  s.params = await s.params;
  s.signedHashValue = await readAll(s.signedHashValue);
  const body = await readAll(sig.write());
  const keyId = hexBytes(keyPacket.getKeyID().toHex());
  const opsBody = concat([
    new Uint8Array([3, openpgp.enums.signature.binary, openpgp.enums.hash.sha256, algo]),
    keyId,
    new Uint8Array([1]),
  ]);
  return {
    ops: concat([packetHeader(TAG.onePassSignature, opsBody.length), opsBody]),
    signature: concat([packetHeader(TAG.signature, body.length), body]),
  };
}

/**
 * Encrypts `plaintext` to `recipients` and self, signed by `signingKey`, as a stream of a known
 * length; times as in `encryptAndSign` (key_times.ts). Memory stays at a chunk or two whatever
 * the plaintext's size.
 */
export async function encryptAndSignStream(p: {
  plaintext: PlaintextSource;
  recipients: readonly openpgp.PublicKey[];
  signingKey: openpgp.PrivateKey;
  /** Unix ms (default `Date.now()`). */
  now?: number;
}): Promise<EncryptedStream> {
  const now = p.now ?? Date.now();
  const encryptionKeys = [...p.recipients, p.signingKey.toPublic()];
  const { ops, signature } = await signStream(
    p.plaintext,
    p.signingKey,
    signingDate(p.signingKey, now),
  );
  const sessionKey = crypto.getRandomValues(new Uint8Array(AES256_KEY_BYTES));
  const pkesks = await openpgp.encryptSessionKey({
    data: sessionKey,
    algorithm: "aes256",
    encryptionKeys,
    wildcard: true,
    date: encryptionDate(encryptionKeys, now),
    format: "binary",
  });
  const literalBody = LITERAL_FIELDS + p.plaintext.bytes;
  const literalHead = concat([
    packetHeader(TAG.literal, literalBody),
    new Uint8Array([0x62, 0]),
    u32(Math.floor(now / 1000)),
  ]);
  const inner = ops.length + literalHead.length + p.plaintext.bytes + signature.length;
  const seipdBody = 1 + BLOCK + 2 + inner + MDC_BYTES;
  const seipdHead = concat([packetHeader(TAG.seipd, seipdBody), new Uint8Array([1])]);
  const bytes = pkesks.length + seipdHead.length + seipdBody - 1;
  const source = p.plaintext;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    yield pkesks;
    yield seipdHead;
    const cipher = new CfbStream(sessionKey);
    const mdc = createHash("sha1");
    const seal = (plain: Uint8Array): Uint8Array => {
      mdc.update(plain);
      return cipher.update(plain);
    };
    const prefix = crypto.getRandomValues(new Uint8Array(BLOCK + 2));
    prefix.set(prefix.subarray(BLOCK - 2, BLOCK), BLOCK);
    yield seal(concat([prefix, ops, literalHead]));
    let read = 0;
    for await (const chunk of source.open()) {
      read += chunk.length;
      yield seal(chunk);
    }
    if (read !== source.bytes) {
      throw new Error(`the plaintext changed while it was encrypted (${read} of ${source.bytes})`);
    }
    yield seal(signature);
    mdc.update(new Uint8Array([0xd3, 0x14]));
    const tail = concat([new Uint8Array([0xd3, 0x14]), new Uint8Array(mdc.digest())]);
    yield concat([cipher.update(tail), cipher.final()]);
  }
  return { bytes, chunks: chunks() };
}

/**
 * AES-256 CFB with a zero IV over a stream (SEIPD v1 has no resynchronisation): whole blocks are
 * encrypted as they come, each run continuing from the last ciphertext block.
 */
class CfbStream {
  #iv: Uint8Array = new Uint8Array(BLOCK);
  #rest: Uint8Array = new Uint8Array(0);
  constructor(private readonly key: Uint8Array) {}

  update(plain: Uint8Array): Uint8Array {
    const held = this.#rest.length;
    const whole = held + plain.length - ((held + plain.length) % BLOCK);
    if (whole === 0) {
      this.#rest = concat([this.#rest, plain]);
      return new Uint8Array(0);
    }
    const out = new Uint8Array(whole);
    let o = 0;
    let p = 0;
    if (held > 0) { // complete the held block first
      const block = new Uint8Array(BLOCK);
      block.set(this.#rest);
      p = BLOCK - held;
      block.set(plain.subarray(0, p), held);
      cfb(this.key, this.#iv).encrypt(block, out.subarray(0, BLOCK));
      this.#iv = out.subarray(0, BLOCK);
      o = BLOCK;
    }
    if (whole > o) {
      cfb(this.key, this.#iv).encrypt(plain.subarray(p, p + whole - o), out.subarray(o, whole));
    }
    this.#iv = out.slice(whole - BLOCK, whole);
    this.#rest = plain.slice(p + whole - o);
    return out;
  }

  /** The last, partial block. */
  final(): Uint8Array {
    const out = this.#rest.length === 0
      ? new Uint8Array(0)
      : cfb(this.key, this.#iv).encrypt(this.#rest);
    this.#rest = new Uint8Array(0);
    return out;
  }
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}
