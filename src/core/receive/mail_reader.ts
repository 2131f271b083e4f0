/**
 * Reads one raw mail for the reception pipeline: parses the outer message, decrypts the
 * `multipart/encrypted` body with our key, parses the inner MIME and checks the signature against
 * the sender's Autocrypt key from inside the encrypted part or the keys we already know for that
 * address. Throws `UnreadableMailError` with a reason for mail that cannot be used.
 */
import type * as openpgp from "openpgp";
import { dearmor } from "../../crypto/armor.ts";
import {
  type AutocryptHeader,
  parseAutocrypt,
  pickAutocrypt,
} from "../../crypto/autocrypt_header.ts";
import { decryptMessage, fingerprintOf } from "../../crypto/pgp.ts";
import { type SignatureCheck, SignatureFailure } from "../../crypto/signature_check.ts";
import {
  decodeEncodedWords,
  leaves,
  type MimeHeaders,
  type MimePart,
  parseMime,
  partText,
} from "../../mime/parser.ts";
import { Header } from "../../protocol.ts";
import type { PeerKey } from "../contacts/contacts.ts";
import type { PeerKeyCache } from "../contacts/peer_keys.ts";

/** Mail the pipeline cannot use; `reason` is recorded. */
export class UnreadableMailError extends Error {
  constructor(message: string, readonly messageId = "", options?: ErrorOptions) {
    super(message, options);
    this.name = "UnreadableMailError";
  }
}

/**
 * A mail that cannot be used yet for a reason that may pass or may be ours (a key we do not have
 * yet, a signature we could not check): reception rejects, so the mail stays on the server and is
 * retried, then quarantined (never deleted unread).
 */
export class RetryableMailError extends Error {
  constructor(message: string, readonly messageId = "", options?: ErrorOptions) {
    super(message, options);
    this.name = "RetryableMailError";
  }
}

/** Why an encrypted mail has no valid signature. */
export const Unverified = {
  /** No signature at all: final. */
  UNSIGNED: "unsigned",
  /** Signed by a key that is neither the one the mail names nor one we know for its sender: final. */
  ANOTHER_KEY: "another_key",
  /** Signed, but the mail names no key and we know none for its sender: the key may still come. */
  MISSING_KEY: "missing_key",
  /** Signed by the right key, but the check failed: may be ours. */
  INVALID: "invalid",
} as const;
export type Unverified = typeof Unverified[keyof typeof Unverified];

/** A mailbox from a header. */
export interface HeaderMailbox {
  readonly addr: string;
  readonly name: string;
}

/** What a mail said, after decryption and signature check. */
export interface ReadMail {
  /** Message-ID without angle brackets. */
  readonly messageId: string;
  readonly from: HeaderMailbox;
  /** The headers that count: the inner (protected) ones for encrypted mail, else the outer. */
  readonly headers: MimeHeaders;
  /** The MIME tree that carries the content (inner for encrypted mail). */
  readonly content: MimePart;
  readonly encrypted: boolean;
  /** Primary-key fingerprint of a valid signature, when there is one. */
  readonly signer?: string;
  /** The key that made the valid signature (binary), when known. */
  readonly signerKey?: Uint8Array;
  /** Encrypted mail without a valid signature: why, and the details. */
  readonly unverified?: { readonly reason: Unverified; readonly detail: string };
  /** The sender's Autocrypt header (inner for encrypted mail), when valid and for From. */
  readonly autocrypt?: AutocryptHeader;
  /** Valid `Autocrypt-Gossip` headers (only from encrypted, signed mail). */
  readonly gossip: readonly AutocryptHeader[];
  /** Unix seconds of the Date header, never later than receipt; 0 when missing or invalid. */
  readonly sentAt: number;
}

/** Keys we already trust for an address (known contacts), binary. */
export type KnownKeys = (addr: string) => readonly Uint8Array[];

/** What reading needs. */
export interface MailReaderDeps {
  readonly privateKey: openpgp.PrivateKey;
  readonly keys: PeerKeyCache;
  /** Secrets of the channels we subscribe to: their posts are encrypted with one of them. */
  readonly channelSecrets?: () => readonly string[];
  readonly knownKeys: KnownKeys;
  /** Decompressed plaintext limit (zip bombs). */
  readonly maxPlaintextBytes?: number;
  /** Receipt clock in Unix ms (default `Date.now`): no header date is later than this. */
  readonly now?: () => number;
}

/** `<id>` → `id`; '' when missing. */
export function stripAngles(value: string | undefined): string {
  return (value ?? "").trim().replace(/^<|>$/g, "").trim();
}

/**
 * Parses `"Name" <a@b>`, `Name <a@b>` or `a@b` (names may be RFC 2047 encoded words); addr
 * lower-cased, '' when none.
 */
export function parseMailbox(value: string | undefined): HeaderMailbox {
  if (!value) return { addr: "", name: "" };
  const angle = /^(.*)<([^<>]*)>\s*$/.exec(value);
  if (angle === null) return { addr: value.trim().toLowerCase(), name: "" };
  const quoted = /^"(.*)"$/.exec(angle[1].trim());
  const name = quoted ? quoted[1].replace(/\\(.)/g, "$1") : angle[1].trim();
  return { addr: angle[2].trim().toLowerCase(), name: decodeEncodedWords(name).trim() };
}

/**
 * Parses an address list (`To`, `Chat-Group-Past-Members`): commas inside quotes or angle
 * brackets do not split; empty entries and group syntax (`"hidden-recipients": ;`) are dropped.
 */
export function parseMailboxList(value: string | undefined): HeaderMailbox[] {
  if (!value) return [];
  const items: string[] = [];
  let cur = "", quoted = false, angle = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === "\\" && quoted) {
      cur += ch + (value[++i] ?? "");
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (ch === "<" && !quoted) angle = true;
    else if (ch === ">" && !quoted) angle = false;
    if (ch === "," && !quoted && !angle) {
      items.push(cur);
      cur = "";
    } else cur += ch;
  }
  items.push(cur);
  return items.map((i) => i.trim()).filter((i) => i !== "" && !/:\s*;?$/.test(i))
    .map(parseMailbox).filter((m) => m.addr.includes("@"));
}

/**
 * Unix seconds of a Date header, clamped to the receipt time (`nowMs`): the sender's clock is
 * the sender's word, and a date in the future must not make its mail (or key) look newest.
 * 0 when missing or invalid.
 */
function dateSeconds(value: string | undefined, nowMs: number): number {
  const t = value ? Date.parse(value) : NaN;
  return Number.isFinite(t) && t > 0 ? Math.floor(Math.min(t, nowMs) / 1000) : 0;
}

/** The armored payload of a `multipart/encrypted` mail, or undefined when it is not one. */
function encryptedPayload(outer: MimePart): string | undefined {
  if (outer.contentType.value !== "multipart/encrypted") return undefined;
  const data = outer.parts.find((p) => p.contentType.value === "application/octet-stream");
  if (data === undefined) {
    throw new UnreadableMailError("multipart/encrypted without an application/octet-stream part");
  }
  return partText(data);
}

/** The Message-ID of mail too broken to parse, from its first 64 KiB, for the error record. */
export function sniffMessageId(raw: Uint8Array): string {
  const head = new TextDecoder().decode(raw.subarray(0, 65_536));
  return /^message-id:[ \t]*<?([^<>\s]{1,250})>?/im.exec(head)?.[1] ?? "";
}

/** What the outer message of an encrypted mail says (the rest is inside). */
export interface OuterFacts {
  readonly messageId: string;
  readonly outerFrom: HeaderMailbox;
  readonly outerDate: string | undefined;
  readonly fail: (reason: string, cause?: unknown) => UnreadableMailError;
}

/** What the outer message of an encrypted mail leaves for decryption. */
interface Encrypted extends OuterFacts {
  /** The binary OpenPGP message (dearmored). */
  readonly ciphertext: Uint8Array;
}

/** Reads `raw`; see the module doc. */
export async function readMail(raw: Uint8Array, deps: MailReaderDeps): Promise<ReadMail> {
  const outer = readOuter(raw, deps);
  return "ciphertext" in outer ? await readEncrypted(outer, deps) : outer;
}

/**
 * Parses the outer message: the mail itself when it is not encrypted, else its dearmored
 * ciphertext. Synchronous, so neither the outer MIME tree nor the armor text (each as large as
 * the mail) stays reachable while the ciphertext is decrypted.
 */
function readOuter(raw: Uint8Array, deps: MailReaderDeps): ReadMail | Encrypted {
  let outer: MimePart;
  try {
    outer = parseMime(raw);
  } catch (err) {
    throw new UnreadableMailError(`broken MIME: ${(err as Error).message}`, sniffMessageId(raw), {
      cause: err,
    });
  }
  const facts = outerFacts(outer);
  const { fail } = facts;
  let armored: string | undefined;
  try {
    armored = encryptedPayload(outer);
  } catch (err) {
    throw fail((err as Error).message, err);
  }
  if (armored === undefined) return plainMail(outer, facts, deps);
  let ciphertext: Uint8Array;
  try {
    ciphertext = dearmor(armored);
  } catch (err) {
    throw fail(`bad armor: ${(err as Error).message}`, err);
  }
  return { ciphertext, ...facts };
}

/** The Message-ID and From of an outer message (both required), and its Date. */
export function outerFacts(outer: MimePart): OuterFacts {
  const messageId = stripAngles(outer.headers.get(Header.MESSAGE_ID));
  const fail = (reason: string, cause?: unknown) =>
    new UnreadableMailError(reason, messageId, { cause });
  if (messageId === "") throw fail("no Message-ID");
  const outerFrom = parseMailbox(outer.headers.get(Header.FROM));
  if (outerFrom.addr === "") throw fail("no From address");
  return { messageId, outerFrom, outerDate: outer.headers.get(Header.DATE), fail };
}

/** A mail that is not encrypted, as its outer message says it. */
export function plainMail(outer: MimePart, facts: OuterFacts, deps: MailReaderDeps): ReadMail {
  const autocrypt = pickAutocrypt(outer.headers.getAll(Header.AUTOCRYPT), facts.outerFrom.addr);
  return {
    messageId: facts.messageId,
    from: facts.outerFrom,
    headers: outer.headers,
    content: outer,
    encrypted: false,
    ...(autocrypt === undefined ? {} : { autocrypt }),
    gossip: [],
    sentAt: dateSeconds(outer.headers.get(Header.DATE), (deps.now ?? Date.now)()),
  };
}

async function readEncrypted(outer: Encrypted, deps: MailReaderDeps): Promise<ReadMail> {
  const { fail } = outer;
  const decrypted = await decryptMessage(
    outer.ciphertext,
    deps.privateKey,
    deps.maxPlaintextBytes,
    deps.channelSecrets?.() ?? [],
  ).catch(
    (err) => {
      throw fail((err as Error).message, err);
    },
  );
  let inner: MimePart;
  try {
    inner = parseMime(decrypted.plaintext);
  } catch (err) {
    throw fail(`broken inner MIME: ${(err as Error).message}`, err);
  }
  return await readDecrypted(outer, inner, (keys) => decrypted.verify(keys), deps);
}

/**
 * The mail an encrypted message is, from its outer facts and its decrypted inner MIME: checks
 * the inner From against the outer one and the signature (`verify`) against the key the mail
 * names or the keys we know for its sender.
 */
export async function readDecrypted(
  outer: OuterFacts,
  inner: MimePart,
  verify: (keys: readonly openpgp.PublicKey[]) => Promise<SignatureCheck>,
  deps: MailReaderDeps,
): Promise<ReadMail> {
  const { messageId, outerFrom, fail } = outer;
  const innerFrom = parseMailbox(inner.headers.get(Header.FROM));
  const from = innerFrom.addr === "" ? outerFrom : innerFrom;
  if (from.addr !== outerFrom.addr) {
    throw fail(
      `the encrypted From ${from.addr} does not match the envelope From ${outerFrom.addr}`,
    );
  }
  const autocrypt = pickAutocrypt(inner.headers.getAll(Header.AUTOCRYPT), from.addr);
  const candidates = [...deps.knownKeys(from.addr)];
  if (autocrypt !== undefined) candidates.unshift(autocrypt.keydata);
  const parsed = (await Promise.all(
    candidates.map((k) => deps.keys.get(k).then((key) => ({ key, bytes: k }), () => undefined)),
  )).filter((k) => k !== undefined);
  const check = await verify(parsed.map((p) => p.key));
  const signer = check.valid ? check.signerFingerprint : undefined;
  const signerKey = parsed.find((p) => fingerprintOf(p.key) === signer)?.bytes;
  // A signer key is only found for a fingerprint: `signer !== undefined` adds no condition.
  const signed = signer !== undefined && signerKey !== undefined;
  return {
    ...(signed
      ? { signer, signerKey }
      : { unverified: unverifiedReason(check, candidates.length > 0) }),
    messageId: stripAngles(inner.headers.get(Header.MESSAGE_ID)) || messageId,
    from,
    headers: inner.headers,
    content: inner,
    encrypted: true,
    ...(autocrypt === undefined ? {} : { autocrypt }),
    gossip: signed
      ? inner.headers.getAll(Header.AUTOCRYPT_GOSSIP).map(parseAutocrypt).filter((g) =>
        g !== undefined
      )
      : [],
    sentAt: dateSeconds(
      inner.headers.get(Header.DATE) ?? outer.outerDate,
      (deps.now ?? Date.now)(),
    ),
  };
}

/**
 * Why a signature check failed, as reception tells final from passing reasons: a signer that is
 * none of the keys the mail names or we know for its sender (`hadKeys`) is another key; only when
 * there was no key to check against may the signer's key still come.
 */
function unverifiedReason(
  check: SignatureCheck,
  hadKeys: boolean,
): { reason: Unverified; detail: string } {
  if (check.valid) return { reason: Unverified.INVALID, detail: "the signer's key is unreadable" };
  switch (check.failure) {
    case SignatureFailure.UNSIGNED:
      return { reason: Unverified.UNSIGNED, detail: check.detail };
    case SignatureFailure.UNKNOWN_SIGNER:
      return hadKeys
        ? { reason: Unverified.ANOTHER_KEY, detail: check.detail }
        : { reason: Unverified.MISSING_KEY, detail: check.detail };
    case SignatureFailure.INVALID:
      return { reason: Unverified.INVALID, detail: check.detail };
  }
}

/** The leaves of the content tree, for callers that look for text and files. */
export function contentLeaves(mail: ReadMail): MimePart[] {
  return leaves(mail.content);
}

/**
 * The signer of a verified mail as a contact update (address and name from From, key and
 * fingerprint from the signature). Throws for mail without a valid signature.
 */
export function senderKey(mail: ReadMail): PeerKey {
  if (mail.signer === undefined || mail.signerKey === undefined) {
    throw new UnreadableMailError(`not signed by a key of ${mail.from.addr}`, mail.messageId);
  }
  return {
    addr: mail.from.addr,
    name: mail.from.name,
    fingerprint: mail.signer,
    publicKey: mail.signerKey,
    ...(mail.sentAt ? { seenAt: mail.sentAt } : {}),
  };
}
