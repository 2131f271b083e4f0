/**
 * Reads a large `/rpc` body as it streams in: counts a batch's members on the way and, once they
 * pass the limit, stops keeping the body, so a huge batch is refused without being held or parsed.
 */
import { BatchScanner } from "./batch_scan.ts";
import { streamLimitedBody } from "./body.ts";

/** What a streamed `/rpc` body turned out to be, and how many bytes of it were read. */
export type RpcBody =
  & { readonly received: number }
  & (
    /** The body as text (decoded as UTF-8), to be parsed. */
    | { readonly kind: "text"; readonly text: string }
    /** Larger than the byte limit (`atLeast` when the client declared no length). */
    | { readonly kind: "too-large"; readonly size: number; readonly atLeast: boolean }
    /** A batch of more than `maxMembers` members (counted up to `maxMembers + 1`); not kept. */
    | { readonly kind: "batch-too-large"; readonly members: number }
  );

/** Limits of `readRpcBody`. */
export interface RpcBodyLimits {
  /** Bytes at most. */
  readonly maxBytes: number;
  /** Members of a batch at most. */
  readonly maxMembers: number;
}

/**
 * Reads `req`'s body under `limits`, decoding it as UTF-8 chunk by chunk (as the Fetch standard's
 * `Request.json()` decodes: bytes that are not UTF-8 become U+FFFD). The text is kept as strings
 * on the JS heap, never as one native buffer. A batch over the member limit is still read to its
 * end, into the same reused buffer and then dropped, so the client, which may be writing its
 * body before reading, gets the answer on an intact connection. Rejects with `BodyReadError`
 * when the body cannot be read.
 */
export async function readRpcBody(req: Request, limits: RpcBodyLimits): Promise<RpcBody> {
  const scanner = new BatchScanner(limits.maxMembers + 1);
  const decoder = new TextDecoder("utf-8");
  const stream = { stream: true };
  let parts: string[] = [];
  let refused = false;
  let received = 0;
  const body = await streamLimitedBody(req, limits.maxBytes, (chunk) => {
    received += chunk.byteLength;
    if (refused) return;
    if (scanner.feed(chunk) > limits.maxMembers) {
      refused = true;
      parts = [];
      decoder.decode(); // ends the decoder's stream
      return;
    }
    parts.push(decoder.decode(chunk, stream));
  });
  if (!body.ok) return { kind: "too-large", size: body.size, atLeast: body.atLeast, received };
  if (refused) return { kind: "batch-too-large", members: scanner.members, received };
  parts.push(decoder.decode());
  return { kind: "text", text: parts.join(""), received };
}
