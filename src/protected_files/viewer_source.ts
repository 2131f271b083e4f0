/**
 * `/stream`'s source of plaintext (viewer/stream.ts `openProtectedFile`): opens a message's
 * `.prv` with the key this gateway holds, sniffs the type from chunk 0, and streams any range
 * chunk by chunk in memory; a revoke arriving meanwhile ends the stream.
 */
import type { EventSink } from "../events/types.ts";
import {
  AccessDeniedError,
  DecryptError,
  detectWithFileType,
  FALLBACK_MIME,
  type ProtectedFile,
  SNIFF_BYTES,
} from "../viewer/stream.ts";
import { identityOf, type PrvOpenCache } from "./prv_open_cache.ts";
import { fileSource, openPrvWithHead, PrvError, type PrvReader, reopenPrv } from "../prv/mod.ts";
import { FileAccessDeniedError, type OpenedFile, type ProtectedFiles } from "./service.ts";

/**
 * Opens `o.path` with `o.cek` and finds its type: from `cache` when this very file (same
 * identity) was verified with this key before, otherwise checked now (header MAC, final chunk,
 * chunk 0 decrypted meanwhile), sniffed from chunk 0, and cached. Errors as openPrvFile (a damaged
 * chunk 0 too), and DecryptError for a failed sniff.
 */
async function openVerified(
  o: OpenedFile,
  cache: PrvOpenCache,
): Promise<{ reader: PrvReader; mime: string }> {
  // Synchronous: opening and fstat of a local file are metadata calls of a few microseconds,
  // cheaper than two round trips through the runtime's blocking pool.
  const file = Deno.openSync(o.path, { read: true });
  let closed = false;
  const release = () => {
    if (!closed) {
      closed = true;
      file.close();
    }
  };
  try {
    const info = file.statSync();
    const identity = identityOf(info);
    const source = await fileSource(file, info.size);
    const hit = cache.get(o.path, identity, o.cek);
    if (hit !== undefined) return { reader: reopenPrv(source, hit, release), mime: hit.mime };
    const { reader, head } = await openPrvWithHead(source, o.cek, SNIFF_BYTES, release);
    let mime: string;
    try {
      mime = (await detectWithFileType(head)) ?? FALLBACK_MIME;
    } catch (err) {
      reader.close();
      throw new DecryptError((err as Error).message);
    }
    cache.set(o.path, identity, o.cek, { ...reader.verified, mime }, o.receivedFileId);
    return { reader, mime };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * The `openProtectedFile` of the viewer routes over `files`: access is checked on every call
 * (`files.open`); what opening verified is kept in `files.openCache`.
 */
export function protectedFileSource(files: ProtectedFiles, events: EventSink) {
  return async (msgId: number): Promise<ProtectedFile | undefined> => {
    let opened: OpenedFile | undefined;
    try {
      opened = await files.open(msgId);
    } catch (err) {
      if (err instanceof FileAccessDeniedError) {
        throw new AccessDeniedError(err.verdict.state, err.verdict.reason);
      }
      throw err;
    }
    if (opened === undefined) return undefined;
    const o = opened;
    let reader: PrvReader;
    let mime: string;
    try {
      ({ reader, mime } = await openVerified(o, files.openCache));
    } catch (err) {
      o.track?.done();
      if (err instanceof Deno.errors.NotFound) {
        files.openCache.forgetPath(o.path);
        return undefined; // the blob is gone: 404
      }
      if (err instanceof PrvError || err instanceof DecryptError) {
        throw new DecryptError(
          `cannot decrypt the file of message ${msgId}: ${(err as Error).message}`,
        );
      }
      throw err;
    } finally {
      if (o.track !== undefined) o.cek.fill(0); // a recipient's joined key lives only here
    }
    let open = 0;
    const closeIfIdle = () => {
      if (open === 0) {
        reader.close();
        o.track?.done();
      }
    };
    // Each stream errors when a revoke aborts `track`, and closes the file after the last one.
    const make = (range?: { start: number; end: number }, onEnd?: (bytes: number) => void) => {
      open++;
      return reader.stream(range, {
        signal: o.track?.signal,
        onEnd: (bytes, complete) => {
          open--;
          closeIfIdle();
          if (complete) onEnd?.(bytes);
        },
      });
    };
    let full: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const plaintext = new ReadableStream<Uint8Array>({
      async pull(controller) {
        full ??= make().getReader();
        const r = await full.read();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      },
      cancel(reason) {
        return full ? full.cancel(reason) : closeIfIdle();
      },
    }, { highWaterMark: 0 });
    events.publish({ kind: "PrivittyFileDecrypted", chatId: o.chatId, msgId });
    return {
      plaintext,
      size: reader.plaintextLength,
      name: o.name,
      mime,
      allowDownload: o.allowDownload,
      slice: (start, end) => make({ start, end }),
      body: (onEnd) => make(undefined, onEnd),
    };
  };
}
