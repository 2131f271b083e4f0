/**
 * `POST /rpc`: checks the transport (Content-Type, body size), parses the body and hands it to
 * dispatch, and maps its reply to HTTP: 200 with a JSON-RPC body, or 204 with none
 * (docs/contract.md §4.2).
 *
 * The handler is a plain `(req: Request) => Promise<Response>` (`rpcRequestHandler`): the Hono
 * route calls it with `c.req.raw`, and the `Deno.serve`-level fast path (`fast_fetch.ts`) calls
 * it directly, so both answer byte for byte alike.
 */
import { RpcCode } from "../constants.ts";
import { describeError } from "../errors.ts";
import { logger } from "../log.ts";
import {
  dispatchJson,
  dispatchText,
  errorResponse,
  MAX_BATCH_MEMBERS,
  parseErrorReply,
  type RpcReply,
} from "../rpc/dispatch.ts";
import type { MethodTable, Scope } from "../rpc/method.ts";
import type { Services } from "../services.ts";
import { type ApiTokens, authorize } from "./access.ts";
import { BodyReadError, describeSize, WHOLE_BODY_MAX_BYTES } from "./body.ts";
import { readRpcBody, type RpcBody, type RpcBodyLimits } from "./rpc_body.ts";

const log = logger("http");

/** Largest request body accepted on /rpc (1 MiB); larger ones get HTTP 413. */
export const MAX_RPC_BODY_BYTES = 1_048_576;

/**
 * Limits of a body read in chunks. `readRpcBody` decodes it as the Fetch standard's
 * `Request.json()` decodes the others (UTF-8, RFC 8259 §8.1): a byte sequence that is not UTF-8
 * becomes U+FFFD, so it makes the body unparsable (-32700) unless it sits inside a string. Every
 * path decodes alike, whichever way the body arrived.
 */
const STREAMED_LIMITS: RpcBodyLimits = Object.freeze({
  maxBytes: MAX_RPC_BODY_BYTES,
  maxMembers: MAX_BATCH_MEMBERS,
});

/** True for `application/json`, with any parameters (`; charset=utf-8`), case-insensitive. */
export function isJsonContentType(value: string | null): boolean {
  if (value === "application/json") return true; // what nearly every client sends
  return value !== null && value.split(";")[0].trim().toLowerCase() === "application/json";
}

/** Answers one `POST /rpc` request, outside any framework. Never rejects (see `rpcRequestHandler`). */
export type RpcRequestHandler = (req: Request) => Promise<Response>;

/** Options of `rpcRequestHandler`. */
export interface RpcHandlerOptions {
  /**
   * Told about the garbage a streamed body (one not declared ≤ `WHOLE_BODY_MAX_BYTES`) left: its
   * size once read, or `WHOLE_BODY_MAX_BYTES` when its read failed (its buffers and request state
   * are left to the collector). The daemon's `BurstGc` adds it up (`src/memory/burst_gc.ts`).
   */
  readonly noteGarbage?: ((bytes: number) => void) | undefined;
  /**
   * The API tokens, when on: a request without a valid `Authorization: Bearer` gets HTTP 401, and
   * each call is checked against the token's scopes (docs/access.md).
   */
  readonly tokens?: ApiTokens | undefined;
}

// Every answer is built by `Response.json` (or is an empty 204): a Response whose only header is
// `content-type: application/json` stays on Deno.serve's fast static-response path (any further
// header costs about a third of the throughput), and `Response.json` allocates less than
// `new Response(JSON.stringify(…), init)` (bench/, BENCHMARKS.md).

/**
 * A transport-level rejection: an HTTP 4xx status, with a JSON-RPC error body (id null) so
 * JSON-RPC clients still read a code and a clear message.
 */
function reject(status: 400 | 413 | 415, code: number, message: string): Response {
  return Response.json(errorResponse(null, code, message), { status });
}

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

/** `send` for a reply that may still be coming. */
function sendReply(reply: RpcReply | Promise<RpcReply>): Response | Promise<Response> {
  return reply instanceof Promise ? reply.then(send) : send(reply);
}

/** What `curl -d` sends unless told otherwise: the 415 says how to tell it. */
const FORM_TYPE = "application/x-www-form-urlencoded";

/**
 * The 415 answer, once the unread body is discarded. Only `application/json` is accepted, and a
 * request without a Content-Type is refused too: a web page may send another origin a POST of a
 * form type or text/plain (an HTML form) or of no type at all (`fetch` with a Blob or
 * ArrayBuffer body) without a CORS preflight, so accepting any of them would let every page open
 * in a browser on this host call `/rpc` (CSRF). A JSON Content-Type always needs a preflight.
 */
async function unsupportedType(req: Request, type: string | null): Promise<Response> {
  try {
    await req.body?.cancel();
  } catch {
    // the body is gone already (client closed): the answer is the same
  }
  const hint = type?.split(";")[0].trim().toLowerCase() === FORM_TYPE
    ? ` (what curl -d sends: add -H 'Content-Type: application/json')`
    : "";
  return reject(
    415,
    RpcCode.INVALID_REQUEST,
    `Content-Type must be application/json, got ${type ?? "none"}${hint}`,
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
 * The 400 answer to a body that could not be read (cut short by a half-close, broken chunked
 * encoding): the client's fault, so logged at debug only.
 */
function unreadable(err: unknown): Response {
  const error = err instanceof BodyReadError ? err : new BodyReadError(err);
  log.debug("POST /rpc: request body unreadable", { error: describeError(error) });
  return reject(400, RpcCode.PARSE_ERROR, `parse error: ${error.message}`);
}

/** The answer to a batch over `MAX_BATCH_MEMBERS`, found while the body streamed in. */
function batchTooLarge(members: number): Response {
  return Response.json(errorResponse(
    null,
    RpcCode.INVALID_REQUEST,
    `invalid request: a batch may hold at most ${MAX_BATCH_MEMBERS} requests, ` +
      `this one holds more than ${members - 1}; nothing was run`,
  ));
}

/**
 * Builds the framework-free `/rpc` handler over the method table. It expects a `POST` (the
 * caller routes) and answers 415, 413, -32700 for a body that is not JSON, 400 for a body that
 * cannot be read, or dispatch's reply (200 with JSON, or an empty 204). It never rejects, so
 * callers add no `catch` of their own (one promise less per request). Per request it allocates
 * no closure: a small declared body is parsed by one `Request.json()` call, and dispatch answers
 * synchronously when the method's handler does. A larger body is streamed (`readRpcBody`): a
 * batch in it is counted as it arrives, so a huge batch is neither kept nor parsed.
 */
export function rpcRequestHandler(
  services: Services,
  methods: MethodTable,
  options: RpcHandlerOptions = {},
): RpcRequestHandler {
  const noteGarbage = options.noteGarbage;
  const tokens = options.tokens;
  const notJson = (err: unknown): Response =>
    err instanceof SyntaxError ? send(parseErrorReply(err)) : unreadable(err);
  const streamedUnreadable = (err: unknown): Response => {
    noteGarbage?.(WHOLE_BODY_MAX_BYTES);
    return unreadable(err);
  };
  /** The answers to a parsed body and to a streamed one, for a caller with `scopes`. */
  const answers = (scopes: ReadonlySet<Scope> | undefined) => ({
    answer: (value: unknown) => sendReply(dispatchJson(value, services, methods, scopes)),
    answerStreamed: (body: RpcBody): Response | Promise<Response> => {
      if (noteGarbage !== undefined && body.received > 0) noteGarbage(body.received);
      switch (body.kind) {
        case "text":
          return sendReply(dispatchText(body.text, services, methods, scopes));
        case "too-large":
          return tooLarge(body);
        case "batch-too-large":
          return batchTooLarge(body.members);
      }
    },
  });
  const handle = (
    req: Request,
    { answer, answerStreamed }: ReturnType<typeof answers>,
  ): Promise<Response> => {
    try {
      const type = req.headers.get("content-type");
      if (!isJsonContentType(type)) return unsupportedType(req, type);
      const declared = Number(req.headers.get("content-length") ?? NaN);
      // The common case: a small declared length (the HTTP server enforces that the body
      // matches it). `Request.json()` on Deno.serve takes a body that has fully arrived as
      // one string, without the body stream or an intermediate buffer: about 15 % more /rpc
      // throughput than `bytes()` + decode + parse (BENCHMARKS.md).
      if (Number.isFinite(declared) && declared <= WHOLE_BODY_MAX_BYTES) {
        return req.json().then(answer, notJson);
      }
      return readRpcBody(req, STREAMED_LIMITS).then(answerStreamed, streamedUnreadable);
    } catch (err) {
      return Promise.resolve(unreadable(err)); // the request was closed under us
    }
  };
  if (tokens === undefined) {
    const open = answers(undefined); // built once: no closure per request
    return (req) => handle(req, open);
  }
  const unauthorized = (message: string) =>
    errorResponse(null, RpcCode.UNAUTHORIZED, `unauthorized: ${message}`);
  // One set of answers per token (its scopes set is the token's own, kept for the process).
  const built = new WeakMap<ReadonlySet<Scope>, ReturnType<typeof answers>>();
  const byScopes = (scopes: ReadonlySet<Scope>) => {
    let found = built.get(scopes);
    if (found === undefined) built.set(scopes, found = answers(scopes));
    return found;
  };
  return async (req: Request): Promise<Response> => {
    const auth = authorize(req, tokens, false, unauthorized);
    if (auth.refused !== undefined) {
      try {
        await req.body?.cancel();
      } catch {
        // the body is gone already: the answer is the same
      }
      return auth.refused;
    }
    return await handle(req, byScopes(auth.caller.scopes));
  };
}
