/**
 * Symmetric OpenPGP for Delta Chat channel posts (docs/protocol-notes.md §9.2): exactly one SKESK
 * v6 with a **Salted** S2K (SHA-256, 8-byte salt) over the channel secret, then SEIPDv2 (AES-128,
 * OCB), signed by the owner and compressed. OpenPGP.js cannot make a Salted S2K, so the SKESK is
 * built here (RFC 9580 §5.3, OCB per RFC 7253 on AES via node:crypto); OpenPGP.js makes the rest
 * with the same session key. Pure apart from randomness.
 */
import { createCipheriv, createHash, hkdfSync } from "node:crypto";
import * as openpgp from "openpgp";
import { signingDate } from "./key_times.ts";

const AES128 = 7;
const OCB = 2;
const SHA256 = 8;
const SKESK_TAG = 3;

function aesBlock(key: Uint8Array, block: Uint8Array): Uint8Array {
  const c = createCipheriv("aes-128-ecb", key, null);
  c.setAutoPadding(false);
  return new Uint8Array(c.update(block));
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  return a.map((v, i) => v ^ b[i]);
}

/** RFC 7253 `double()`: a 128-bit left shift, folding the carry back with 0x87. */
function double(s: Uint8Array): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = ((s[i] << 1) | (i < 15 ? s[i + 1] >> 7 : 0)) & 0xff;
  if (s[0] & 0x80) out[15] ^= 0x87;
  return out;
}

/** Bits `from`..`from+127` of `bytes` as 16 bytes. */
function bitSlice(bytes: Uint8Array, from: number): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 128; i++) {
    const bit = (bytes[(from + i) >> 3] >> (7 - ((from + i) & 7))) & 1;
    out[i >> 3] |= bit << (7 - (i & 7));
  }
  return out;
}

/**
 * AES-128-OCB (RFC 7253, 128-bit tag) encryption of whole 16-byte blocks with a 15-byte nonce and
 * associated data of at most 15 bytes (all the SKESK needs): ciphertext then tag.
 */
export function ocbEncrypt(
  key: Uint8Array,
  nonce: Uint8Array,
  plaintext: Uint8Array,
  adata: Uint8Array,
): Uint8Array {
  if (nonce.length !== 15 || plaintext.length % 16 !== 0 || adata.length >= 16) {
    throw new Error("ocbEncrypt: 15-byte nonce, whole blocks, adata shorter than a block");
  }
  const lStar = aesBlock(key, new Uint8Array(16));
  const lDollar = double(lStar);
  const l = [double(lDollar)];
  const lAt = (i: number) => {
    while (l.length <= i) l.push(double(l[l.length - 1]));
    return l[i];
  };
  const ntz = (i: number) => {
    let n = 0;
    while ((i & 1) === 0) i >>= 1, n++;
    return n;
  };
  const full = new Uint8Array(16);
  full[0] = 0x01; // TAGLEN mod 128 = 0 in 7 bits, then the 1 bit before a 120-bit nonce
  full.set(nonce, 1);
  const bottom = full[15] & 0x3f;
  const top = full.slice();
  top[15] &= 0xc0;
  const ktop = aesBlock(key, top);
  const stretch = new Uint8Array(24);
  stretch.set(ktop);
  stretch.set(xor(ktop.subarray(0, 8), ktop.subarray(1, 9)), 16);
  let offset = bitSlice(stretch, bottom);
  let checksum: Uint8Array = new Uint8Array(16);
  const out = new Uint8Array(plaintext.length + 16);
  for (let i = 1; i * 16 <= plaintext.length; i++) {
    const p = plaintext.subarray((i - 1) * 16, i * 16);
    offset = xor(offset, lAt(ntz(i)));
    out.set(xor(offset, aesBlock(key, xor(p, offset))), (i - 1) * 16);
    checksum = xor(checksum, p);
  }
  let sum: Uint8Array = new Uint8Array(16);
  if (adata.length > 0) {
    const padded = new Uint8Array(16);
    padded.set(adata);
    padded[adata.length] = 0x80;
    sum = aesBlock(key, xor(padded, lStar));
  }
  const tag = xor(aesBlock(key, xor(xor(checksum, offset), lDollar)), sum);
  out.set(tag, plaintext.length);
  return out;
}

/** A SKESK v6 packet (header included) for `sessionKey` under `password`, Salted S2K. */
export function saltedSkesk(
  password: string,
  sessionKey: Uint8Array,
  random: (n: number) => Uint8Array = (n) => crypto.getRandomValues(new Uint8Array(n)),
): Uint8Array {
  const salt = random(8);
  const iv = random(15);
  const s2kKey = createHash("sha256").update(salt).update(new TextEncoder().encode(password))
    .digest().subarray(0, 16);
  const adata = new Uint8Array([0xc0 | SKESK_TAG, 6, AES128, OCB]);
  const kek = new Uint8Array(hkdfSync("sha256", s2kKey, new Uint8Array(), adata, 16));
  const encrypted = ocbEncrypt(kek, iv, sessionKey, adata);
  const s2k = [1, SHA256, ...salt];
  const body = new Uint8Array([
    6,
    3 + s2k.length + iv.length,
    AES128,
    OCB,
    s2k.length,
    ...s2k,
    ...iv,
    ...encrypted,
  ]);
  return new Uint8Array([0xc0 | SKESK_TAG, body.length, ...body]);
}

/** Length of the first packet (header included) of a binary OpenPGP message (new format). */
function firstPacketLength(bytes: Uint8Array): number {
  if ((bytes[0] & 0xc0) !== 0xc0) throw new Error("expected a new-format packet");
  const b1 = bytes[1];
  if (b1 < 192) return 2 + b1;
  if (b1 < 224) return 3 + ((b1 - 192) << 8) + bytes[2] + 192;
  if (b1 === 255) return 6 + ((bytes[2] << 24) | (bytes[3] << 16) | (bytes[4] << 8) | bytes[5]);
  throw new Error("partial-length session key packet");
}

/**
 * Encrypts a channel post with the channel `secret` as Delta Chat does: one Salted SKESK v6,
 * SEIPDv2 AES-128/OCB, signed by `signingKey`, ZLIB-compressed. Binary message out.
 */
export async function encryptForChannel(p: {
  plaintext: Uint8Array;
  secret: string;
  signingKey: openpgp.PrivateKey;
}): Promise<Uint8Array> {
  const data = crypto.getRandomValues(new Uint8Array(16));
  const sessionKey = { data, algorithm: "aes128" as const, aeadAlgorithm: "ocb" as const };
  const made = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: p.plaintext }),
    passwords: ["replaced by the salted SKESK"],
    sessionKey,
    signingKeys: p.signingKey,
    date: signingDate(p.signingKey, Date.now()),
    format: "binary",
    config: {
      aeadProtect: true,
      preferredAEADAlgorithm: openpgp.enums.aead.ocb,
      preferredSymmetricAlgorithm: openpgp.enums.symmetric.aes128,
      preferredCompressionAlgorithm: openpgp.enums.compression.zlib,
    },
  }) as Uint8Array;
  if ((made[0] & 0x3f) !== SKESK_TAG) throw new Error("expected OpenPGP.js to start with a SKESK");
  const rest = made.subarray(firstPacketLength(made));
  if ((rest[0] & 0x3f) === SKESK_TAG) throw new Error("expected exactly one SKESK");
  const skesk = saltedSkesk(p.secret, data);
  const out = new Uint8Array(skesk.length + rest.length);
  out.set(skesk);
  out.set(rest, skesk.length);
  return out;
}
