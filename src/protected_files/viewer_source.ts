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
import { PrvError } from "./prv_errors.ts";
import { openPrvFile, type PrvReader } from "./prv_reader.ts";
import { FileAccessDeniedError, type OpenedFile, type ProtectedFiles } from "./service.ts";

/** Wraps `inner` so that it errors when `signal` aborts, and calls `done` once at its end. */
function guarded(
  inner: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
  done: () => void,
): ReadableStream<Uint8Array> {
  const reader = inner.getReader();
  let finished = false;
  const finish = () => {
    if (!finished) {
      finished = true;
      done();
    }
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener("abort", () => {
        controller.error(signal.reason);
        reader.cancel(signal.reason).catch(() => {});
        finish();
      }, { once: true });
    },
    async pull(controller) {
      if (signal?.aborted) return;
      try {
        const r = await reader.read();
        if (signal?.aborted) return;
        if (r.done) {
          controller.close();
          finish();
        } else controller.enqueue(r.value);
      } catch (err) {
        controller.error(err);
        finish();
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** The `openProtectedFile` of the viewer routes over `files`. */
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
    try {
      reader = await openPrvFile(o.path, o.cek);
    } catch (err) {
      o.track?.done();
      if (err instanceof Deno.errors.NotFound) return undefined; // the blob is gone: 404
      if (err instanceof PrvError) {
        throw new DecryptError(
          `cannot decrypt the file of message ${msgId}: ${(err as Error).message}`,
        );
      }
      throw err;
    } finally {
      if (o.track !== undefined) o.cek.fill(0); // a recipient's joined key lives only here
    }
    let mime: string;
    try {
      const head = await reader.read(0, Math.min(SNIFF_BYTES, reader.plaintextLength));
      mime = (await detectWithFileType(head)) ?? FALLBACK_MIME;
    } catch (err) {
      reader.close();
      o.track?.done();
      throw new DecryptError(
        `cannot decrypt the file of message ${msgId}: ${(err as Error).message}`,
      );
    }
    let open = 0;
    const closeIfIdle = () => {
      if (open === 0) {
        reader.close();
        o.track?.done();
      }
    };
    const make = (range?: { start: number; end: number }) => {
      open++;
      return guarded(reader.stream(range), o.track?.signal, () => {
        open--;
        closeIfIdle();
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
    };
  };
}
