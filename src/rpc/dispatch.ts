/**
 * JSON-RPC 2.0 dispatch: envelope (single, batch, notifications), method lookup, params, license
 * gate, handler, and the one place errors become JSON-RPC error objects and HTTP statuses.
 */
import { RpcCode } from "../constants.ts";
import { describeError, diskFullError, GatewayError } from "../errors.ts";
import { requireLicense } from "../license/gate.ts";
import { logger } from "../log.ts";
import type { Services } from "../services.ts";
import type { MethodEntry, MethodTable, Scope } from "./method.ts";
import { validateParams } from "./params.ts";

const log = logger("rpc");

/** A request id as JSON-RPC allows it. */
export type RpcId = string | number | null;

/** The `error` member of a response. */
export interface RpcErrorObject {
  readonly code: number;
  readonly message: string;
}

/** One response object. */
export type RpcResponse =
  | { readonly jsonrpc: "2.0"; readonly id: RpcId; readonly result: unknown }
  | { readonly jsonrpc: "2.0"; readonly id: RpcId; readonly error: RpcErrorObject };

/** What the HTTP route sends: a JSON body with 200, or 204 when there is nothing to send. */
export type RpcReply =
  | { readonly status: 200; readonly body: RpcResponse | RpcResponse[] }
  | { readonly status: 204 };

/** Builds an error response. */
export function errorResponse(id: RpcId, code: number, message: string): RpcResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** Members of one batch at most; a larger batch is answered with one -32600 and not run. */
export const MAX_BATCH_MEMBERS = 100;

/**
 * Size of a batch's answer at most (UTF-16 code units of its JSON, about bytes): once the
 * answers reach it, the remaining members are not run and each gets a -32000 error instead.
 */
export const MAX_BATCH_ANSWER_CHARS = 8 * 1024 * 1024;

/** The reply to a request that needs none (notifications, void methods). */
const NO_REPLY: RpcReply = Object.freeze({ status: 204 });

/**
 * Parses a request body and dispatches it. Bad JSON → -32700 with id null; an array is a batch
 * (answered with an array, or 204 when only notifications were in it; an empty array is a
 * single -32600); a single request to a `void` method, or a notification, → 204.
 */
export async function dispatch(
  text: string,
  services: Services,
  methods: MethodTable,
  scopes?: ReadonlySet<Scope>,
): Promise<RpcReply> {
  return await dispatchText(text, services, methods, scopes);
}

/**
 * `dispatch` without the promise when it is not needed: the reply itself when every handler it
 * calls answers synchronously (e.g. `get_config`), else a promise of it. Never throws.
 */
export function dispatchText(
  text: string,
  services: Services,
  methods: MethodTable,
  scopes?: ReadonlySet<Scope>,
): RpcReply | Promise<RpcReply> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return parseErrorReply(err);
  }
  return dispatchJson(value, services, methods, scopes);
}

/** The -32700 reply for a body `JSON.parse` (or `Request.json()`) rejected with `err`. */
export function parseErrorReply(err: unknown): RpcReply {
  const why = err instanceof Error ? err.message : String(err);
  const body = errorResponse(null, RpcCode.PARSE_ERROR, `parse error: body is not JSON (${why})`);
  return { status: 200, body };
}

/**
 * Dispatches an already parsed request or batch (e.g. by `Request.json()`), see `dispatch`;
 * like `dispatchText`, without a promise when no handler returned one. Never throws.
 */
export function dispatchJson(
  value: unknown,
  services: Services,
  methods: MethodTable,
  scopes?: ReadonlySet<Scope>,
): RpcReply | Promise<RpcReply> {
  if (!Array.isArray(value)) {
    const response = handleOne(value, services, methods, true, scopes);
    return response instanceof Promise ? response.then(singleReply) : singleReply(response);
  }
  if (value.length === 0) {
    const body = errorResponse(null, RpcCode.INVALID_REQUEST, "invalid request: empty batch");
    return { status: 200, body };
  }
  if (value.length > MAX_BATCH_MEMBERS) {
    const body = errorResponse(
      null,
      RpcCode.INVALID_REQUEST,
      `invalid request: a batch may hold at most ${MAX_BATCH_MEMBERS} requests, ` +
        `this one holds ${value.length}; nothing was run`,
    );
    return { status: 200, body };
  }
  return dispatchBatch(value, services, methods, scopes);
}

function singleReply(response: RpcResponse | undefined): RpcReply {
  return response === undefined ? NO_REPLY : { status: 200, body: response };
}

async function dispatchBatch(
  members: unknown[],
  services: Services,
  methods: MethodTable,
  scopes: ReadonlySet<Scope> | undefined,
): Promise<RpcReply> {
  // Members run one after another, so their side effects (e.g. sends) keep the batch's order.
  const responses: RpcResponse[] = [];
  let chars = 2; // "[]"
  for (const member of members) {
    if (chars > MAX_BATCH_ANSWER_CHARS) {
      const skipped = notRun(member);
      if (skipped !== undefined) responses.push(skipped);
      continue;
    }
    const response = await handleOne(member, services, methods, false, scopes);
    if (response === undefined) continue;
    responses.push(response);
    chars += jsonLength(response) + 1;
  }
  return responses.length === 0 ? NO_REPLY : { status: 200, body: responses };
}

/** The length of a response's JSON (a result JSON cannot represent counts as its error). */
function jsonLength(response: RpcResponse): number {
  try {
    return JSON.stringify(response).length;
  } catch {
    return 100;
  }
}

/** The answer to a batch member left out because the answer reached its size limit. */
function notRun(member: unknown): RpcResponse | undefined {
  const req = typeof member === "object" && member !== null && !Array.isArray(member)
    ? member as Record<string, unknown>
    : undefined;
  if (req !== undefined && !("id" in req)) return undefined; // a notification: no answer
  const id = req !== undefined && isId(req.id) ? req.id : null;
  return errorResponse(
    id,
    RpcCode.LIMIT_REACHED,
    `not run: the batch's answer reached its limit of ${MAX_BATCH_ANSWER_CHARS} characters; ` +
      "send this request again in a smaller batch",
  );
}

function isId(value: unknown): value is RpcId {
  return value === null || typeof value === "string" ||
    (typeof value === "number" && Number.isFinite(value));
}

function invalidRequest(id: RpcId, why: string): RpcResponse {
  return errorResponse(id, RpcCode.INVALID_REQUEST, `invalid request: ${why}`);
}

/**
 * Checks one request's envelope and runs it. Answers its response; undefined for a notification
 * whose envelope is valid, and, when `single`, for a successful call of a `void` method (204).
 * A promise only when the handler returned one.
 */
function handleOne(
  value: unknown,
  services: Services,
  methods: MethodTable,
  single: boolean,
  scopes: ReadonlySet<Scope> | undefined,
): RpcResponse | undefined | Promise<RpcResponse | undefined> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return invalidRequest(null, "a request must be a JSON object");
  }
  const req = value as Record<string, unknown>;
  const notification = !("id" in req);
  if (!notification && !isId(req.id)) {
    return invalidRequest(null, '"id" must be a string, number or null');
  }
  const id = notification ? null : req.id as RpcId;
  if (req.jsonrpc !== "2.0") return invalidRequest(id, '"jsonrpc" must be "2.0"');
  const method = req.method;
  if (typeof method !== "string") return invalidRequest(id, '"method" must be a string');
  const params = req.params;
  if (params !== undefined && (typeof params !== "object" || params === null)) {
    return invalidRequest(id, '"params" must be an array');
  }
  if (notification) {
    // Run for its effects; whatever it answers is dropped.
    const entry = methods.get(method);
    if (
      entry !== undefined && (params === undefined || Array.isArray(params)) &&
      (scopes === undefined || scopes.has(entry.scope))
    ) {
      const called = call(entry, params ?? [], id, services);
      if (called instanceof Promise) return called.then(dropResponse);
    }
    return undefined;
  }
  const entry = methods.get(method);
  if (entry === undefined) {
    return errorResponse(id, RpcCode.METHOD_NOT_FOUND, `method not found: "${method}"`);
  }
  if (scopes !== undefined && !scopes.has(entry.scope)) return outOfScope(id, entry, scopes);
  if (params !== undefined && !Array.isArray(params)) {
    return errorResponse(
      id,
      RpcCode.INVALID_PARAMS,
      `params must be a positional array (named params are not supported by ${method})`,
    );
  }
  const called = call(entry, params ?? [], id, services);
  if (single && entry.void === true) {
    return called instanceof Promise ? called.then(voidReply) : voidReply(called);
  }
  return called;
}

/**
 * The answer to a call its API token's scopes do not cover: -32003, naming the scope needed and
 * the token's (docs/access.md#scopes). The method is not run.
 */
function outOfScope(id: RpcId, entry: MethodEntry, scopes: ReadonlySet<Scope>): RpcResponse {
  const held = scopes.size === 0 ? "none" : [...scopes].join(", ");
  return errorResponse(
    id,
    RpcCode.FORBIDDEN,
    `forbidden: ${entry.name} needs the "${entry.scope}" scope; this API token has ${held}`,
  );
}

function dropResponse(): undefined {
  return undefined;
}

/** A void method's success has no reply (204); its errors are answered. */
function voidReply(response: RpcResponse): RpcResponse | undefined {
  return "result" in response ? undefined : response;
}

/** A value `await` would wait for. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

function success(id: RpcId, result: unknown): RpcResponse {
  return { jsonrpc: "2.0", id, result: result === undefined ? null : result };
}

/**
 * Validates params, applies the license gate and runs the handler; never throws or rejects. A
 * promise only when the handler returned one.
 */
function call(
  entry: MethodEntry,
  params: unknown[],
  id: RpcId,
  services: Services,
): RpcResponse | Promise<RpcResponse> {
  try {
    validateParams(entry, params);
    if (entry.license) requireLicense(entry.name, services.license);
    const result = entry.handler(services, params);
    if (!isThenable(result)) return success(id, result);
    return Promise.resolve(result).then(
      (value) => success(id, value),
      (err) => failure(err, entry, id, services),
    );
  } catch (err) {
    return failure(err, entry, id, services);
  }
}

function failure(err: unknown, entry: MethodEntry, id: RpcId, services: Services): RpcResponse {
  const full = diskFullError(err);
  // A file write's ENOSPC is news for `/health` too (the database notes SQLite's own).
  if (full !== undefined) services.store.disk?.noteFull(full.message);
  const { code, message } = toRpcError(full ?? err, entry.name);
  return errorResponse(id, code, message);
}

/** Finds a Deno permission error in `err` or its cause chain. */
function permissionError(err: unknown): Error | undefined {
  let cur = err;
  for (let depth = 0; cur instanceof Error && depth < 5; depth++) {
    if (cur instanceof Deno.errors.NotCapable || cur instanceof Deno.errors.PermissionDenied) {
      return cur;
    }
    cur = cur.cause;
  }
  return undefined;
}

/**
 * Maps a thrown value to a JSON-RPC error: GatewayError → its code and message; a Deno
 * permission error → -1 saying the path is outside what the daemon may access; a full disk
 * (SQLITE_FULL, ENOSPC: in the error or its causes) → -1 saying so; anything else
 * → -32603 "internal error" (logged here; no stack or detail reaches the client).
 */
export function toRpcError(err: unknown, method: string): RpcErrorObject {
  const denied = permissionError(err);
  if (denied !== undefined) {
    const detail = denied.message.replace(/,?\s*run again with.*$/is, "");
    const message = denied instanceof Deno.errors.NotCapable
      ? `${method}: access denied: the path is outside what the daemon may access ` +
        `(its data directory and files directory): ${detail}`
      : `${method}: permission denied by the operating system: ${detail}`;
    return { code: RpcCode.APPLICATION, message };
  }
  const full = diskFullError(err);
  if (full !== undefined) return { code: full.code, message: `${method}: ${full.message}` };
  if (err instanceof GatewayError) return { code: err.code, message: err.message };
  log.error(`${method} failed unexpectedly`, { error: describeError(err) });
  if (err instanceof Error && err.stack) log.debug(err.stack);
  return { code: RpcCode.INTERNAL_ERROR, message: "internal error" };
}
