/**
 * Fixed-size reads from an already opened plaintext source (a `Deno.FsFile`, a file read at
 * offsets, or a `ReadableStream<Uint8Array>`), so the `.prv` writer can cut it into chunks of
 * exactly 64 KiB.
 */

/**
 * A source read at offsets straight into the caller's buffer, such as the checked file of
 * `openAttachableFile` (core/file_access.ts): no stream and no copy between.
 */
export interface OffsetReader {
  /** Reads into `buf` from byte `position`; resolves to the bytes read, 0 at the end. */
  readAt(buf: Uint8Array, position: number): Promise<number>;
}

/**
 * A plaintext source: an opened file (read from its current position), a file read at offsets
 * (from 0), or a byte stream.
 */
export type PlaintextSource = Deno.FsFile | OffsetReader | ReadableStream<Uint8Array>;

/** Reads that fill a buffer completely unless the source ends. */
export interface FillReader {
  /** Fills `buf` from the source; returns the bytes written, fewer only at the end. */
  fill(buf: Uint8Array): Promise<number>;
  /** Stops reading: cancels a stream (a file is left to its owner to close). */
  cancel(reason?: unknown): Promise<void>;
}

function fileFiller(file: Deno.FsFile): FillReader {
  return {
    async fill(buf) {
      let at = 0;
      while (at < buf.byteLength) {
        const n = await file.read(buf.subarray(at));
        if (n === null) break;
        at += n;
      }
      return at;
    },
    cancel: () => Promise.resolve(),
  };
}

function offsetFiller(source: OffsetReader): FillReader {
  let position = 0;
  return {
    async fill(buf) {
      let at = 0;
      while (at < buf.byteLength) {
        const n = await source.readAt(buf.subarray(at), position);
        if (n === 0) break;
        at += n;
        position += n;
      }
      return at;
    },
    cancel: () => Promise.resolve(),
  };
}

function streamFiller(stream: ReadableStream<Uint8Array>): FillReader {
  const reader = stream.getReader();
  let pending: Uint8Array = new Uint8Array(0);
  let ended = false;
  return {
    async fill(buf) {
      let at = 0;
      while (at < buf.byteLength) {
        if (pending.byteLength === 0) {
          if (ended) break;
          const r = await reader.read();
          if (r.done) {
            ended = true;
            reader.releaseLock();
            break;
          }
          pending = r.value;
          continue;
        }
        const n = Math.min(pending.byteLength, buf.byteLength - at);
        buf.set(pending.subarray(0, n), at);
        pending = pending.subarray(n);
        at += n;
      }
      return at;
    },
    async cancel(reason) {
      if (!ended) await reader.cancel(reason).catch(() => {});
    },
  };
}

/** A FillReader over `source`. */
export function fillReaderOf(source: PlaintextSource): FillReader {
  if (source instanceof ReadableStream) return streamFiller(source);
  return "readAt" in source ? offsetFiller(source) : fileFiller(source);
}
