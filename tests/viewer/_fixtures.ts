/** Byte fixtures for viewer tests: a PNG-looking file and a chunked, observable stream. */

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** A PNG-looking file: signature, an IHDR chunk header, then filler. */
export function pngBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set(PNG_MAGIC);
  bytes.set([0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52], 8);
  for (let i = 16; i < size; i++) bytes[i] = i % 251;
  return bytes;
}

/** A stream of `bytes` in chunks of `chunk` bytes; records how far it was read. */
export function chunked(bytes: Uint8Array, chunk: number) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(state.pulled, state.pulled + chunk));
      state.pulled += chunk;
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}
