/** An authenticated connection: the QUIC connection and the framed stream the transfer uses. */
import { P2pWire } from "../../constants.ts";
import { FrameReader } from "./wire.ts";

export interface Link {
  conn: Deno.QuicConn;
  reader: FrameReader;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  /** "dialed": we connected to the peer; "accepted": the peer connected to us. */
  via: "dialed" | "accepted";
  /** Set once the connection is known to be closed. */
  readonly closed: boolean;
  close(code?: number, reason?: string): void;
}

export function makeLink(
  conn: Deno.QuicConn,
  reader: FrameReader,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  via: Link["via"],
): Link {
  let closed = false;
  conn.closed.then(() => closed = true, () => closed = true);
  return {
    conn,
    reader,
    writer,
    via,
    get closed() {
      return closed;
    },
    close(code: number = P2pWire.CLOSE_DONE, reason = "done") {
      if (closed) return;
      closed = true;
      try {
        conn.close({ closeCode: code, reason });
      } catch {
        // already closed by the peer or the endpoint
      }
    },
  };
}

/** Constant-time equality of two tokens. */
export function tokensEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
