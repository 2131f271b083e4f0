/**
 * Reads a large raw mail from its file as mail_reader.ts reads a small one, in bounded memory:
 * the outer MIME is streamed and its armored part dearmored into a ciphertext temp file, which
 * is decrypted as a stream into the streaming inner MIME parse; the first attachment goes
 * through its base64 decode into a hidden temp file in the blob directory (hashed on the way),
 * text parts into bounded buffers. The signature is checked at the end of the stream; the temp
 * attachment is the caller's to adopt (verified mail) or remove ({@link discardSpooled}).
 */
import { ArmorDecoder } from "../../crypto/armor_stream.ts";
import { diskFullError } from "../../errors.ts";
import { ArmorError } from "../../crypto/armor.ts";
import { decryptStream, PgpError } from "../../crypto/pgp.ts";
import { mailHead, type MailSource, openMail } from "../../mime/mail_source.ts";
import { leaves, MimeParseError, type MimePart } from "../../mime/parser.ts";
import {
  type BodySink,
  bufferSink,
  discardSink,
  type LeafInfo,
  parseMimeStream,
} from "../../mime/stream_parser.ts";
import { attachmentSink, ReceiveTemp } from "../blobs.ts";
import { isAttachment } from "./content.ts";
import {
  type MailReaderDeps,
  outerFacts,
  plainMail,
  readDecrypted,
  type ReadMail,
  sniffMessageId,
  UnreadableMailError,
} from "./mail_reader.ts";

/** Where a streamed read keeps its temp files, and how much plaintext it accepts. */
export interface StreamedReadOptions {
  /** The blob directory (temp files are hidden there, on the blobs' file system). */
  readonly blobDir: string;
  /** Decompressed plaintext limit of one mail. */
  readonly maxPlaintextBytes: number;
}

/** Bytes of a small part of the outer message kept (the `Version: 1` part). */
const OUTER_PART_BYTES = 64 * 1024;
/** Bytes of the head read to name a mail too broken to parse. */
const SNIFF_BYTES = 64 * 1024;

/**
 * A file system error (a full disk above all) is no fault of the mail: it passes through, so the
 * mail stays on the server (retried, or the drain pauses for the disk).
 */
function isFileSystemError(err: unknown): boolean {
  return diskFullError(err) !== undefined ||
    Object.values(Deno.errors).some((E) => err instanceof E);
}

/** Removes the temp files of a mail's spooled leaves (a mail not stored, or stored already). */
export async function discardSpooled(part: MimePart): Promise<void> {
  for (const leaf of leaves(part)) {
    if (leaf.spooled !== undefined) await Deno.remove(leaf.spooled.path).catch(() => {});
  }
}

/** Reads a mail from `source` in bounded memory; throws as `readMail` does. */
export async function readStreamedMail(
  source: MailSource,
  deps: MailReaderDeps,
  opts: StreamedReadOptions,
): Promise<ReadMail> {
  await Deno.mkdir(opts.blobDir, { recursive: true });
  const cipherPath = await Deno.makeTempFile({
    dir: opts.blobDir,
    prefix: ReceiveTemp.CIPHERTEXT,
  });
  try {
    return await readWithCiphertextFile(source, cipherPath, deps, opts);
  } finally {
    await Deno.remove(cipherPath).catch(() => {});
  }
}

async function readWithCiphertextFile(
  source: MailSource,
  cipherPath: string,
  deps: MailReaderDeps,
  opts: StreamedReadOptions,
): Promise<ReadMail> {
  let armorFound = false;
  let outer: MimePart;
  {
    using cipher = await Deno.open(cipherPath, { write: true, truncate: true });
    const out = {
      async write(bytes: Uint8Array) {
        for (let off = 0; off < bytes.byteLength;) off += await cipher.write(bytes.subarray(off));
      },
    };
    const choose = (leaf: LeafInfo): BodySink => {
      if (leaf.ancestors.length === 0 || leaf.ancestors[0] !== "multipart/encrypted") {
        return discardSink(); // not encrypted: refused for what it is, its bodies do not matter
      }
      if (
        armorFound || leaf.ancestors.length !== 1 ||
        leaf.contentType.value !== "application/octet-stream"
      ) {
        return bufferSink(OUTER_PART_BYTES);
      }
      armorFound = true;
      const armor = new ArmorDecoder(out);
      return {
        write: (bytes) => armor.write(bytes),
        async end() {
          await armor.end();
          return { body: new Uint8Array() };
        },
        abort: () => Promise.resolve(),
      };
    };
    try {
      outer = await parseMimeStream(await openMail(source), choose);
    } catch (err) {
      if (isFileSystemError(err)) throw err;
      const messageId = sniffMessageId(await mailHead(source, SNIFF_BYTES));
      const reason = err instanceof ArmorError
        ? `bad armor: ${err.message}`
        : `broken MIME: ${(err as Error).message}`;
      throw new UnreadableMailError(reason, messageId, { cause: err });
    }
  }
  const facts = outerFacts(outer);
  if (outer.contentType.value !== "multipart/encrypted") return plainMail(outer, facts, deps);
  if (!armorFound) {
    throw facts.fail("multipart/encrypted without an application/octet-stream part");
  }
  const decrypting = await decryptStream(
    (await Deno.open(cipherPath, { read: true })).readable,
    deps.privateKey,
    opts.maxPlaintextBytes,
    deps.channelSecrets?.() ?? [],
  ).catch((err) => {
    throw facts.fail((err as Error).message, err);
  });
  let fileTaken = false;
  const choose = (leaf: LeafInfo): BodySink => {
    if (!isAttachment(leaf)) return bufferSink();
    if (fileTaken) return discardSink(); // reception takes the first file only
    fileTaken = true;
    return attachmentSink(opts.blobDir);
  };
  let inner: MimePart;
  try {
    inner = await parseMimeStream(decrypting.data, choose);
  } catch (err) {
    if (isFileSystemError(err)) throw err;
    if (err instanceof MimeParseError) {
      throw facts.fail(`broken inner MIME: ${err.message}`, err);
    }
    // The decryption stream failed: tampered, cut short or over the plaintext limit.
    const reason = err instanceof PgpError
      ? err.message
      : `cannot decrypt: ${err instanceof Error ? err.message : String(err)}`;
    throw facts.fail(reason, err);
  }
  try {
    return await readDecrypted(facts, inner, (keys) => decrypting.verify(keys), deps);
  } catch (err) {
    await discardSpooled(inner);
    throw err;
  }
}
