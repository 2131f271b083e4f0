/** Framing on the one bidirectional stream: HELLO, ACCEPTED, RESUME, the bytes, DONE. */
import { P2pWire } from "../../constants.ts";

/** HELLO: magic ‖ version ‖ role ‖ id length ‖ transfer id (UTF-8) ‖ token (32 bytes). */
export interface Hello {
  role: typeof P2pWire.ROLE_RECEIVER | typeof P2pWire.ROLE_SENDER;
  transferId: string;
  token: Uint8Array;
}

const MAGIC = new TextEncoder().encode(P2pWire.MAGIC);

export function encodeHello(h: Hello): Uint8Array {
  const id = new TextEncoder().encode(h.transferId);
  const out = new Uint8Array(MAGIC.length + 3 + id.length + h.token.length);
  out.set(MAGIC, 0);
  out[4] = P2pWire.VERSION;
  out[5] = h.role;
  out[6] = id.length;
  out.set(id, 7);
  out.set(h.token, 7 + id.length);
  return out;
}

/** RESUME: the offset the receiver holds, u64 big-endian. */
export function encodeResume(offset: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(offset));
  return out;
}

/** Reads exact byte counts from a stream, keeping what is left over for the next read. */
export class FrameReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buf: Uint8Array = new Uint8Array(0);

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** Exactly `n` bytes, or undefined when the stream ends first. */
  async exact(n: number): Promise<Uint8Array | undefined> {
    while (this.#buf.length < n) {
      const { value, done } = await this.#reader.read();
      if (done) return undefined;
      const next = new Uint8Array(this.#buf.length + value.length);
      next.set(this.#buf, 0);
      next.set(value, this.#buf.length);
      this.#buf = next;
    }
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }

  /** The next chunk (what is buffered first), at most `max` bytes; undefined at the end. */
  async chunk(max: number): Promise<Uint8Array | undefined> {
    if (this.#buf.length > 0) {
      const out = this.#buf.subarray(0, max);
      this.#buf = this.#buf.subarray(out.length);
      return out;
    }
    const { value, done } = await this.#reader.read();
    if (done) return undefined;
    if (value.length <= max) return value;
    this.#buf = value.subarray(max);
    return value.subarray(0, max);
  }

  /** Reads a HELLO; undefined when it is not one (wrong magic or version, truncated). */
  async hello(): Promise<Hello | undefined> {
    const head = await this.exact(7);
    if (!head) return undefined;
    for (let i = 0; i < MAGIC.length; i++) if (head[i] !== MAGIC[i]) return undefined;
    if (head[4] !== P2pWire.VERSION) return undefined;
    const role = head[5];
    if (role !== P2pWire.ROLE_RECEIVER && role !== P2pWire.ROLE_SENDER) return undefined;
    const idLen = head[6]!;
    if (idLen === 0 || idLen > P2pWire.MAX_TRANSFER_ID_BYTES) return undefined;
    const rest = await this.exact(idLen + P2pWire.TOKEN_BYTES);
    if (!rest) return undefined;
    let transferId: string;
    try {
      transferId = new TextDecoder("utf-8", { fatal: true }).decode(rest.subarray(0, idLen));
    } catch {
      return undefined;
    }
    return { role, transferId, token: rest.slice(idLen) };
  }

  /** Reads a RESUME offset; undefined at the end of the stream. */
  async resume(): Promise<number | undefined> {
    const b = await this.exact(8);
    if (!b) return undefined;
    const v = new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(v);
  }

  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}
