/**
 * JSON-RPC 2.0 dispatch: envelope (single, batch, notifications), method lookup, params, license
 * gate, handler, and the one place errors become JSON-RPC error objects and HTTP statuses.
 */
import { RpcCode } from "../constants.ts";
import { describeError, GatewayError } from "../errors.ts";
import { requireLicense } from "../license/gate.ts";
import { logger } from "../log.ts";
import type { Services } from "../services.ts";
import type { MethodEntry, MethodTable } from "./method.ts";
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

/** Outcome of one request: its response (none for notifications) and whether it was void. */
interface Outcome {
  readonly response?: RpcResponse;
  readonly void: boolean;
}

/** Builds an error response. */
export function errorResponse(id: RpcId, code: number, message: string): RpcResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/**
 * Parses a request body and dispatches it. Bad JSON → -32700 with id null; an array is a batch
 * (answered with an array, or 204 when only notifications were in it; an empty array is a
 * single -32600); a single request to a `void` method, or a notification, → 204.
 */
export async function dispatch(
  text: string,
  services: Services,
  methods: MethodTable,
): Promise<RpcReply> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const body = errorResponse(null, RpcCode.PARSE_ERROR, `parse error: body is not JSON (${why})`);
    return { status: 200, body };
  }
  return await dispatchValue(value, services, methods);
}

/** Dispatches an already parsed request or batch (see `dispatch`). */
export async function dispatchValue(
  value: unknown,
  services: Services,
  methods: MethodTable,
): Promise<RpcReply> {
  if (!Array.isArray(value)) {
    const outcome = await handleOne(value, services, methods);
    if (outcome.response === undefined || outcome.void) return { status: 204 };
    return { status: 200, body: outcome.response };
  }
  if (value.length === 0) {
    const body = errorResponse(null, RpcCode.INVALID_REQUEST, "invalid request: empty batch");
    return { status: 200, body };
  }
  // Members run one after another, so their side effects (e.g. sends) keep the batch's order.
  const responses: RpcResponse[] = [];
  for (const member of value) {
    const { response } = await handleOne(member, services, methods);
    if (response !== undefined) responses.push(response);
  }
  return responses.length === 0 ? { status: 204 } : { status: 200, body: responses };
}

function isId(value: unknown): value is RpcId {
  return value === null || typeof value === "string" ||
    (typeof value === "number" && Number.isFinite(value));
}

/** Checks the envelope; returns the request parts or the error response it deserves. */
function readEnvelope(
  value: unknown,
): { method: string; params: unknown; id: RpcId; notification: boolean } | RpcResponse {
  const invalid = (id: RpcId, why: string) =>
    errorResponse(id, RpcCode.INVALID_REQUEST, `invalid request: ${why}`);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return invalid(null, "a request must be a JSON object");
  }
  const req = value as Record<string, unknown>;
  const notification = !("id" in req);
  if (!notification && !isId(req.id)) return invalid(null, '"id" must be a string, number or null');
  const id = notification ? null : req.id as RpcId;
  if (req.jsonrpc !== "2.0") return invalid(id, '"jsonrpc" must be "2.0"');
  if (typeof req.method !== "string") return invalid(id, '"method" must be a string');
  const params = req.params;
  if (params !== undefined && (typeof params !== "object" || params === null)) {
    return invalid(id, '"params" must be an array');
  }
  return { method: req.method, params, id, notification };
}

async function handleOne(
  value: unknown,
  services: Services,
  methods: MethodTable,
): Promise<Outcome> {
  const envelope = readEnvelope(value);
  if ("jsonrpc" in envelope) return { response: envelope, void: false };
  const { method, id, notification } = envelope;
  const entry = methods.get(method);
  let response: RpcResponse;
  if (entry === undefined) {
    response = errorResponse(id, RpcCode.METHOD_NOT_FOUND, `method not found: "${method}"`);
  } else if (!Array.isArray(envelope.params) && envelope.params !== undefined) {
    response = errorResponse(
      id,
      RpcCode.INVALID_PARAMS,
      `params must be a positional array (named params are not supported by ${method})`,
    );
  } else {
    response = await call(entry, (envelope.params as unknown[] | undefined) ?? [], id, services);
  }
  if (notification) return { void: false };
  return { response, void: entry?.void === true && "result" in response };
}

/** Validates params, applies the license gate and runs the handler; never throws. */
async function call(
  entry: MethodEntry,
  params: unknown[],
  id: RpcId,
  services: Services,
): Promise<RpcResponse> {
  try {
    validateParams(entry, params);
    if (entry.license) requireLicense(entry.name, services.license);
    const result = await entry.handler(services, params);
    return { jsonrpc: "2.0", id, result: result === undefined ? null : result };
  } catch (err) {
    const { code, message } = toRpcError(err, entry.name);
    return errorResponse(id, code, message);
  }
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
 * permission error → -1 saying the path is outside what the daemon may access; anything else
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
  if (err instanceof GatewayError) return { code: err.code, message: err.message };
  log.error(`${method} failed unexpectedly`, { error: describeError(err) });
  if (err instanceof Error && err.stack) log.debug(err.stack);
  return { code: RpcCode.INTERNAL_ERROR, message: "internal error" };
}
