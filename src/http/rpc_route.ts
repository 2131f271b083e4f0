/**
 * `POST /rpc`: checks the transport (Content-Type, body size, UTF-8), hands the body to
 * dispatch and maps its reply to HTTP: 200 with a JSON-RPC body, or 204 with none (SPEC §4).
 */
import type { Context } from "hono";
import { RpcCode } from "../constants.ts";
import { dispatch, errorResponse, type RpcReply } from "../rpc/dispatch.ts";
import type { MethodTable } from "../rpc/method.ts";
import type { Services } from "../services.ts";
import { describeSize, readLimitedBody } from "./body.ts";

/** Largest request body accepted on /rpc (1 MiB); larger ones get HTTP 413. */
export const MAX_RPC_BODY_BYTES = 1_048_576;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const utf8Lax = new TextDecoder("utf-8");

/** True for `application/json`, with any parameters (`; charset=utf-8`), case-insensitive. */
export function isJsonContentType(value: string | null): boolean {
  return value !== null && value.split(";")[0].trim().toLowerCase() === "application/json";
}

/**
 * A transport-level rejection: an HTTP 4xx status, with a JSON-RPC error body (id null) so
 * JSON-RPC clients still read a code and a clear message.
 */
function reject(c: Context, status: 413 | 415, code: number, message: string): Response {
  return c.json(errorResponse(null, code, message), status);
}

/** Builds the `/rpc` handler over the method table. */
export function rpcHandler(services: Services, methods: MethodTable) {
  return async (c: Context): Promise<Response> => {
    const type = c.req.header("content-type") ?? null;
    if (!isJsonContentType(type)) {
      await c.req.raw.body?.cancel().catch(() => {});
      return reject(
        c,
        415,
        RpcCode.INVALID_REQUEST,
        `Content-Type must be application/json, got ${type ?? "none"}`,
      );
    }
    const body = await readLimitedBody(c.req.raw, MAX_RPC_BODY_BYTES);
    if (!body.ok) {
      return reject(
        c,
        413,
        RpcCode.INVALID_REQUEST,
        `request body too large (${describeSize(body)}, limit ${MAX_RPC_BODY_BYTES})`,
      );
    }
    let text: string;
    try {
      // The lax decoder is cheaper; only a U+FFFD in its output needs the strict check, which
      // tells a literal U+FFFD from bytes that are not UTF-8.
      text = utf8Lax.decode(body.bytes);
      if (text.includes("\uFFFD")) text = utf8.decode(body.bytes);
    } catch {
      return c.json(errorResponse(null, RpcCode.PARSE_ERROR, "parse error: body is not UTF-8"));
    }
    return send(c, await dispatch(text, services, methods));
  };
}

const JSON_ONLY = { "content-type": "application/json" } as const;

/** Serializes a dispatch reply; a result JSON cannot represent becomes -32603. */
function send(c: Context, reply: RpcReply): Response {
  if (reply.status === 204) return c.body(null, 204);
  let json: string;
  try {
    json = JSON.stringify(reply.body);
  } catch {
    json = JSON.stringify(
      errorResponse(null, RpcCode.INTERNAL_ERROR, "internal error: result is not JSON"),
    );
  }
  // A plain Response whose only header is Content-Type stays on Deno.serve's fast path; any
  // further header costs about a third of the throughput (measured: bench/ and BENCHMARKS.md).
  return new Response(json, { headers: JSON_ONLY });
}
