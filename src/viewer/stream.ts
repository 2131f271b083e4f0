/**
 * Serving decrypted plaintext to the viewer: the seam to the protected-file code, and the sniff
 * of the first bytes for `Content-Type` while the rest streams through without being buffered.
 */
import { concatBytes } from "../bytes.ts";
import { GatewayError } from "../errors.ts";
import type { ViewerSessions } from "./session.ts";

/** Bytes read before detecting the type (file-type's recommended sample size). */
export const SNIFF_BYTES = 4100;
/** Type used when detection finds nothing. */
export const FALLBACK_MIME = "application/octet-stream";

/** Decryption of a protected file failed (wrong key, corrupt or tampered file): HTTP 500. */
export class DecryptError extends GatewayError {}

/**
 * Access to a protected file is not active now (HTTP 403 with the state): revoked, expired,
 * requested (no grant yet), denied, waiting_owner_action, not_found.
 */
export class AccessDeniedError extends GatewayError {
  constructor(readonly state: string, readonly reason: string) {
    super(`access to this file is ${state}: ${reason}`);
  }
}

/** A protected file opened for reading; `plaintext` is decrypted in memory as it is read. */
export interface ProtectedFile {
  readonly plaintext: ReadableStream<Uint8Array>;
  readonly size?: number;
  /** Original file name, for Content-Disposition. */
  readonly name?: string;
  /** The type, when the opener detected it already (then `plaintext` is not sniffed). */
  readonly mime?: string;
  /**
   * The plaintext `[start, end)` (a `Range` request; `size` must be set); the route then cancels
   * `plaintext` unread.
   */
  slice?(start: number, end: number): ReadableStream<Uint8Array>;
  /** false: the owner did not allow saving it (`Content-Disposition: inline`, a rule header). */
  readonly allowDownload?: boolean;
  /**
   * The whole plaintext as a response body (instead of `plaintext`, which is then left unread),
   * calling `onEnd(bytes)` once it has been read to its end; with `mime` set.
   */
  body?(onEnd: (bytes: number) => void): ReadableStream<Uint8Array>;
}

/** What the viewer routes need. */
export interface ViewerDeps {
  readonly sessions: ViewerSessions;
  /**
   * Opens the `.prv` attachment of message `msgId`: undefined when the message or its file
   * does not exist; throws DecryptError when it cannot be decrypted.
   */
  openProtectedFile(msgId: number): Promise<ProtectedFile | undefined>;
}

/** `openProtectedFile` of a build without protected files: nothing is ever found. */
export function noProtectedFiles(_msgId: number): Promise<ProtectedFile | undefined> {
  return Promise.resolve(undefined);
}

/** Detects a MIME type from leading bytes, or undefined. */
export type TypeDetector = (head: Uint8Array) => Promise<string | undefined>;

let fileType: Promise<TypeDetector> | undefined;

/** file-type, imported on first use so /rpc and /events never load it (its env access, B3). */
export function detectWithFileType(head: Uint8Array): Promise<string | undefined> {
  fileType ??= import("file-type").then((m) => async (h: Uint8Array) =>
    (await m.fileTypeFromBuffer(h))?.mime
  );
  return fileType.then((detect) => detect(head));
}

/** A sniffed stream: its type and a body that replays the sniffed bytes, then the rest. */
export interface SniffedStream {
  readonly mime: string;
  readonly body: ReadableStream<Uint8Array>;
}

/** Reads at least SNIFF_BYTES, or everything when shorter; `done` says the source ended. */
async function readHead(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<{ head: Uint8Array; done: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total < SNIFF_BYTES) {
    const r = await reader.read();
    if (r.done) return { head: concatBytes(chunks), done: true };
    chunks.push(r.value);
    total += r.value.byteLength;
  }
  return { head: concatBytes(chunks), done: false };
}

/** A pull-based body: `head` first, then the rest of `reader`; `onEnd` once at its end. */
function bodyAfterHead(
  head: Uint8Array,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  sourceDone: boolean,
  onEnd: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  let sent = 0;
  let headSent = false;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headSent) {
        headSent = true;
        if (head.byteLength > 0) {
          sent += head.byteLength;
          controller.enqueue(head);
          return;
        }
      }
      const r = sourceDone ? { done: true as const, value: undefined } : await reader.read();
      if (cancelled) return;
      if (r.done) {
        controller.close();
        onEnd(sent);
        return;
      }
      sent += r.value.byteLength;
      controller.enqueue(r.value);
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/**
 * Reads the head of `plaintext`, detects its type, and returns a body that streams every byte
 * without buffering more than the head. Errors before the first byte is sent (e.g.
 * DecryptError) reject and release the source; later ones error the body. `onEnd(bytes)` runs
 * once when the body has been read to its end.
 */
export async function sniffStream(
  plaintext: ReadableStream<Uint8Array>,
  onEnd: (bytes: number) => void = () => {},
  detect: TypeDetector = detectWithFileType,
): Promise<SniffedStream> {
  const reader = plaintext.getReader();
  try {
    const { head, done } = await readHead(reader);
    const mime = (await detect(head.subarray(0, SNIFF_BYTES))) ?? FALLBACK_MIME;
    return { mime, body: bodyAfterHead(head, reader, done, onEnd) };
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
}
