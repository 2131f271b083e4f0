/**
 * `POST /rpc`: checks the transport (Content-Type, body size, UTF-8), hands the body to
 * dispatch and maps its reply to HTTP: 200 with a JSON-RPC body, or 204 with none (SPEC §4).
 *
 * The handler is a plain `(req: Request) => Promise<Response>` (`rpcRequestHandler`): the Hono
 * route calls it with `c.req.raw`, and the `Deno.serve`-level fast path (`fast_fetch.ts`) calls
 * it directly, so both answer byte for byte alike.
 */
import { RpcCode } from "../constants.ts";
import { dispatchText, errorResponse, type RpcReply } from "../rpc/dispatch.ts";
import type { MethodTable } from "../rpc/method.ts";
import type { Services } from "../services.ts";
import { describeSize, type LimitedBody, readLimitedBody } from "./body.ts";

/** Largest request body accepted on /rpc (1 MiB); larger ones get HTTP 413. */
export const MAX_RPC_BODY_BYTES = 1_048_576;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const utf8Lax = new TextDecoder("utf-8");

/** True for `application/json`, with any parameters (`; charset=utf-8`), case-insensitive. */
export function isJsonContentType(value: string | null): boolean {
  if (value === "application/json") return true; // what nearly every client sends
  return value !== null && value.split(";")[0].trim().toLowerCase() === "application/json";
}

/** Answers one `POST /rpc` request, outside any framework. Rejects only if the body read fails. */
export type RpcRequestHandler = (req: Request) => Promise<Response>;

// Every answer is built by `Response.json` (or is an empty 204): a Response whose only header is
// `content-type: application/json` stays on Deno.serve's fast static-response path (any further
// header costs about a third of the throughput), and `Response.json` allocates less than
// `new Response(JSON.stringify(…), init)` (bench/, BENCHMARKS.md).

/**
 * A transport-level rejection: an HTTP 4xx status, with a JSON-RPC error body (id null) so
 * JSON-RPC clients still read a code and a clear message.
 */
function reject(status: 413 | 415, code: number, message: string): Response {
  return Response.json(errorResponse(null, code, message), { status });
}

const NOT_UTF8 = errorResponse(null, RpcCode.PARSE_ERROR, "parse error: body is not UTF-8");
const NOT_JSON_RESULT = errorResponse(
  null,
  RpcCode.INTERNAL_ERROR,
  "internal error: result is not JSON",
);

const NO_CONTENT: ResponseInit = { status: 204 };

/** Serializes a dispatch reply; a result JSON cannot represent becomes -32603. */
function send(reply: RpcReply): Response {
  if (reply.status === 204) return new Response(null, NO_CONTENT);
  try {
    return Response.json(reply.body);
  } catch {
    return Response.json(NOT_JSON_RESULT);
  }
}

/** The 415 answer, once the unread body is discarded. */
async function unsupportedType(req: Request, type: string | null): Promise<Response> {
  await req.body?.cancel().catch(() => {});
  return reject(
    415,
    RpcCode.INVALID_REQUEST,
    `Content-Type must be application/json, got ${type ?? "none"}`,
  );
}

function tooLarge(body: { size: number; atLeast: boolean }): Response {
  return reject(
    413,
    RpcCode.INVALID_REQUEST,
    `request body too large (${describeSize(body)}, limit ${MAX_RPC_BODY_BYTES})`,
  );
}

/**
 * Builds the framework-free `/rpc` handler over the method table. It expects a `POST` (the
 * caller routes) and answers 415, 413, -32700 for a body that is not UTF-8, or dispatch's reply
 * (200 with JSON, or an empty 204). Per request it allocates no closure: a body within the
 * declared limit is read with one `bytes()` call, and dispatch answers synchronously when the
 * method's handler does.
 */
export function rpcRequestHandler(services: Services, methods: MethodTable): RpcRequestHandler {
  const answer = (bytes: Uint8Array): Response | Promise<Response> => {
    // The lax decoder is cheaper; only a U+FFFD in its output needs the strict check, which
    // tells a literal U+FFFD from bytes that are not UTF-8.
    let text = utf8Lax.decode(bytes);
    if (text.includes("\uFFFD")) {
      try {
        text = utf8.decode(bytes);
      } catch {
        return Response.json(NOT_UTF8);
      }
    }
    const reply = dispatchText(text, services, methods);
    return reply instanceof Promise ? reply.then(send) : send(reply);
  };
  const answerLimited = (body: LimitedBody) => body.ok ? answer(body.bytes) : tooLarge(body);
  return (req: Request): Promise<Response> => {
    const type = req.headers.get("content-type");
    if (!isJsonContentType(type)) return unsupportedType(req, type);
    const declared = Number(req.headers.get("content-length") ?? NaN);
    // The common case, inlined from readLimitedBody: a declared length within the limit (the
    // HTTP server enforces that the body matches it), read in one call without `req.body`.
    // Not `req.json()`: on Deno.serve it skips the body's ArrayBuffer (about 8 % more
    // throughput, BENCHMARKS.md) but decodes bytes that are not UTF-8 lossily, so a body that
    // is not UTF-8 could no longer be told from one with a literal U+FFFD.
    if (Number.isFinite(declared) && declared <= MAX_RPC_BODY_BYTES) {
      return req.bytes().then(answer);
    }
    return readLimitedBody(req, MAX_RPC_BODY_BYTES).then(answerLimited);
  };
}
