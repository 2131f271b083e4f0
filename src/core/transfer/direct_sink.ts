/**
 * The direct path's bytes on disk: the sender's source is the message's blob (a `.prv`'s
 * ciphertext, never plaintext), the receiver's sink appends to the transfer's partial blob from
 * the last verified part and records each part once it is synced, so a drop or a restart resumes
 * there and relay parts can take over from what arrived.
 */
import type { P2pSink, P2pSource } from "../../transport/p2p/mod.ts";
import { bit } from "./kit.ts";
import { sliceChunks } from "./partial_blob.ts";

/** The sender's bytes: the file at `path` from any offset. */
export function blobSource(path: string, size: number): P2pSource {
  return { open: (offset) => ReadableStream.from(sliceChunks(path, offset, size - offset)) };
}

/** Verified bytes at the start of a partial blob: the parts set from part 0 without a gap. */
export function leadingBytes(
  t: { size: number; partSize: number; parts: number },
  have: Uint8Array,
) {
  let i = 0;
  while (i < t.parts && bit(have, i)) i++;
  return Math.min(t.size, i * t.partSize);
}

/** What the sink records: the parts below `bytes` are on disk (synced). */
export type PartsWritten = (completeParts: number) => void;

/** A sink that appends to the partial blob at `path` and records whole parts. */
export class PartialBlobSink implements P2pSink {
  #file: Deno.FsFile | undefined;
  #pos = 0;

  constructor(
    private readonly path: string,
    private readonly t: { size: number; partSize: number; parts: number },
    private readonly start: number,
    private readonly recorded: PartsWritten,
  ) {}

  resumeOffset(): Promise<number> {
    return Promise.resolve(this.start);
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#file === undefined) {
      this.#file = await Deno.open(this.path, { write: true, create: true });
      await this.#file.seek(this.start, Deno.SeekMode.Start);
      this.#pos = this.start;
    }
    for (let off = 0; off < chunk.byteLength;) off += await this.#file.write(chunk.subarray(off));
    const before = this.#complete(this.#pos);
    this.#pos += chunk.byteLength;
    const after = this.#complete(this.#pos);
    if (after > before) {
      await this.#file.syncData();
      this.recorded(after);
    }
  }

  readBack(length: number): ReadableStream<Uint8Array> {
    return ReadableStream.from(sliceChunks(this.path, 0, length));
  }

  /** Closes the file (the run ended). */
  close(): void {
    try {
      this.#file?.close();
    } catch {
      // closed already
    }
    this.#file = undefined;
  }

  /** Parts wholly below `pos`. */
  #complete(pos: number): number {
    return pos >= this.t.size ? this.t.parts : Math.floor(pos / this.t.partSize);
  }
}
