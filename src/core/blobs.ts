/**
 * The blob directory: content-addressed copies of message files named `<sha256 prefix>.<ext>`,
 * written atomically (temp file + rename) and deduplicated. Callers' files come in already opened.
 */
import { createHash } from "node:crypto";
import type { SpooledBody } from "../mime/parser.ts";
import type { BodySink } from "../mime/stream_parser.ts";
import { SPOOL_PREFIX } from "../transport/inbox_drain.ts";

/** Hex digits of the SHA-256 kept in a blob name (128 bits). */
export const BLOB_HASH_CHARS = 32;

/** A file in the blob directory. */
export interface BlobFile {
  /** File name inside the blob directory, e.g. `3f…a1.prv`. */
  readonly blob: string;
  /** Absolute path of the blob. */
  readonly path: string;
  /** The original file name (shown as `fileName`). */
  readonly name: string;
  readonly mime: string;
  readonly bytes: number;
}

const BLOB_NAME = /^[0-9a-f]{32}(\.[a-z0-9]{1,16})?$/;

/** MIME types by lower-case extension; everything else (including `.prv`) is octet-stream. */
const MIME_BY_EXT: Record<string, string> = {
  txt: "text/plain",
  html: "text/html",
  csv: "text/csv",
  vcf: "text/vcard",
  json: "application/json",
  pdf: "application/pdf",
  zip: "application/zip",
  xdc: "application/webxdc+zip",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  ogg: "audio/ogg",
  opus: "audio/ogg",
  wav: "audio/wav",
  mp4: "video/mp4",
  webm: "video/webm",
};

/** The lower-case extension of a file name without the dot, or '' (only [a-z0-9], ≤ 16). */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return "";
  const ext = base.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,16}$/.test(ext) ? ext : "";
}

/** The MIME type guessed from a file name's extension. */
export function mimeOf(name: string): string {
  return MIME_BY_EXT[extensionOf(name)] ?? "application/octet-stream";
}

/** The last path segment of `path`. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** `<first 32 hex of sha256>.<ext of name>` (no dot without an extension). */
export function blobName(sha256Hex: string, name: string): string {
  const ext = extensionOf(name);
  return sha256Hex.slice(0, BLOB_HASH_CHARS) + (ext === "" ? "" : `.${ext}`);
}

/** Whether `name` has the form of a blob file name (`<32 hex>[.<ext>]`). */
export function isBlobName(name: string): boolean {
  return BLOB_NAME.test(name);
}

/** Absolute path of a blob; throws for a name that is not a blob name (no path tricks). */
export function blobPath(blobDir: string, blob: string): string {
  if (!isBlobName(blob)) throw new Error(`"${blob}" is not a blob file name`);
  return `${blobDir.replace(/\/+$/, "")}/${blob}`;
}

/** Moves a finished temp file to its blob name, or drops it when that blob exists already. */
async function settle(tmp: string, target: string): Promise<void> {
  try {
    await Deno.lstat(target);
    await Deno.remove(tmp);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    await Deno.rename(tmp, target);
  }
}

/**
 * Copies a file's content (an `AttachableFile`'s `chunks()`: the file that was checked, already
 * open) into the blob directory (created if missing) and returns the blob named after `name`.
 * The copy streams through SHA-256, so equal contents with the same extension share one blob.
 */
export async function importFile(
  blobDir: string,
  content: AsyncIterable<Uint8Array>,
  name: string,
): Promise<BlobFile> {
  await Deno.mkdir(blobDir, { recursive: true });
  const tmp = await Deno.makeTempFile({ dir: blobDir, prefix: ".import-" });
  const hash = createHash("sha256");
  let bytes = 0;
  try {
    using out = await Deno.open(tmp, { write: true, truncate: true });
    for await (const chunk of content) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      for (let off = 0; off < chunk.byteLength;) off += await out.write(chunk.subarray(off));
    }
    const blob = blobName(hash.digest("hex"), name);
    await settle(tmp, blobPath(blobDir, blob));
    return { blob, path: blobPath(blobDir, blob), name, mime: mimeOf(name), bytes };
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** Writes received bytes as a blob (deduplicated) and returns it; `mime` defaults by name. */
export async function writeBlob(
  blobDir: string,
  data: Uint8Array,
  name: string,
  mime: string = mimeOf(name),
): Promise<BlobFile> {
  const blob = blobName(createHash("sha256").update(data).digest("hex"), name);
  const path = blobPath(blobDir, blob);
  await Deno.mkdir(blobDir, { recursive: true });
  const tmp = await Deno.makeTempFile({ dir: blobDir, prefix: ".write-" });
  try {
    await Deno.writeFile(tmp, data);
    await settle(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  return { blob, path, name, mime, bytes: data.byteLength };
}

/** Removes a blob; returns false when it was not there. */
export async function removeBlob(blobDir: string, blob: string): Promise<boolean> {
  try {
    await Deno.remove(blobPath(blobDir, blob));
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/**
 * Prefixes of the temporary files reception keeps in the blob directory while a large mail is
 * read: the fetched mail, its dearmored ciphertext, and the attachment before its mail verified.
 * None outlives its mail; leftovers of a killed process go at the next start
 * ({@link removeReceiveLeftovers}).
 */
export const ReceiveTemp = {
  MAIL: SPOOL_PREFIX,
  CIPHERTEXT: ".cipher-",
  ATTACHMENT: ".recv-",
} as const;

/**
 * A sink for a received attachment: writes it to a hidden temp file in the blob directory,
 * hashing as it goes. Nothing shows it until {@link adoptSpooled} renames it into a blob, which
 * reception does only for a mail whose signature verified; `abort` removes it.
 */
export function attachmentSink(blobDir: string): BodySink {
  Deno.mkdirSync(blobDir, { recursive: true });
  const path = Deno.makeTempFileSync({ dir: blobDir, prefix: ReceiveTemp.ATTACHMENT });
  const file = Deno.openSync(path, { write: true, truncate: true });
  const hash = createHash("sha256");
  let bytes = 0;
  let open = true;
  const close = () => {
    if (open) file.close();
    open = false;
  };
  return {
    async write(chunk) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      for (let off = 0; off < chunk.byteLength;) off += await file.write(chunk.subarray(off));
    },
    async end() {
      await file.sync().catch(() => {});
      close();
      return { body: new Uint8Array(), spooled: { path, bytes, sha256: hash.digest("hex") } };
    },
    async abort() {
      close();
      await Deno.remove(path).catch(() => {});
    },
  };
}

/** Moves a verified spooled attachment into its blob (deduplicated) and returns the blob. */
export async function adoptSpooled(
  blobDir: string,
  spooled: SpooledBody,
  name: string,
  mime: string = mimeOf(name),
): Promise<BlobFile> {
  const blob = blobName(spooled.sha256, name);
  const path = blobPath(blobDir, blob);
  await settle(spooled.path, path);
  return { blob, path, name, mime, bytes: spooled.bytes };
}

/** Removes the temp files of receptions a killed process left in the blob directory. */
export async function removeReceiveLeftovers(blobDir: string): Promise<number> {
  let removed = 0;
  try {
    for await (const e of Deno.readDir(blobDir)) {
      if (!e.isFile || !Object.values(ReceiveTemp).some((p) => e.name.startsWith(p))) continue;
      await Deno.remove(`${blobDir}/${e.name}`).catch(() => {});
      removed++;
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return removed;
}
