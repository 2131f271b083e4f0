/**
 * The Hono application: the five routes of docs/contract.md §4.1, CORS as one optional middleware,
 * and JSON answers for unknown paths (404), wrong methods (405) and unexpected failures (500). Its
 * `serverFetch` is the handler for `Deno.serve`: `app.fetch` plus, without CORS, the `POST /rpc`
 * and `GET /stream/<id>` fast paths of `fast_fetch.ts`.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { cors } from "hono/cors";
import type { EventBus } from "../events/bus.ts";
import { describeError } from "../errors.ts";
import { logger } from "../log.ts";
import type { MethodTable } from "../rpc/method.ts";
import type { Services } from "../services.ts";
import type { ViewerDeps } from "../viewer/stream.ts";
import {
  type AccessPolicy,
  type AllowedHosts,
  type ApiTokens,
  type CorsSetting,
  refuseRequest,
} from "./access.ts";
import { AuthRateLimit, authRateLimit } from "./auth_rate_limit.ts";
import { BodyReadError } from "./body.ts";
import { eventsHandler } from "./events_route.ts";
import { type FetchHandler, withFastPaths } from "./fast_fetch.ts";
import { healthHandler, type HealthReport } from "./health_route.ts";
import { rpcRequestHandler } from "./rpc_route.ts";
import { authHandler, DOWNLOAD_RULE_HEADER, streamRequestHandler } from "./viewer_routes.ts";

const log = logger("http");

/** What the app is built from. */
export interface AppDeps {
  readonly services: Services;
  readonly methods: MethodTable;
  readonly bus: EventBus;
  readonly viewer: ViewerDeps;
  /**
   * `--cors`: send CORS headers and answer preflights, for any origin (`true`) or the listed
   * ones; off (`false`), a request naming another origin is refused (docs/access.md).
   */
  readonly cors: CorsSetting;
  /** `--allowed-hosts`: host names beyond IP literals, localhost and single labels (default none). */
  readonly allowedHosts?: AllowedHosts;
  /** The API tokens, when on: `/rpc` and `/events` need one (docs/access.md). */
  readonly tokens?: ApiTokens | undefined;
  /** SSE keepalive interval in ms. */
  readonly ssePingMs: number;
  /** Cheap liveness report (no I/O). */
  health(): HealthReport;
  /** Failed `/auth` attempts per client (default: 5 per minute). */
  readonly authRateLimit?: AuthRateLimit;
  /** Told the garbage of each streamed `/rpc` body (`RpcHandlerOptions`): the daemon's BurstGc. */
  readonly noteGarbage?: (bytes: number) => void;
}

/** Path → the one method it serves (for 405 answers and the `Allow` header). */
export const ROUTES = {
  "/rpc": "POST",
  "/events": "GET",
  "/health": "GET",
  "/auth": "POST",
  "/stream/:msg_id": "GET",
} as const;

function methodNotAllowed(path: keyof typeof ROUTES) {
  const allowed = ROUTES[path] === "GET" ? "GET, HEAD" : ROUTES[path];
  return (c: Context) =>
    c.json({ error: "method not allowed", method: c.req.method, allowed }, 405, {
      Allow: allowed,
    });
}

/** The Hono app plus the handler to give `Deno.serve`. */
export type GatewayApp = Hono & {
  /**
   * What `Deno.serve` should call: `POST /rpc` and `GET /stream/<id>` bypass Hono's routing when
   * CORS is off (same answers, byte for byte); everything else, and everything under `--cors`,
   * is `app.fetch`.
   */
  readonly serverFetch: FetchHandler;
};

const INTERNAL_ERROR = { error: "internal error" } as const;

/**
 * The fast paths' 500 answer, built like Hono's `c.json` (not Response.json), so it equals the
 * route's onError byte for byte (onError keeps `c.json`: under `--cors` that adds the headers).
 */
function internalError(): Response {
  return new Response(JSON.stringify(INTERNAL_ERROR), {
    status: 500,
    headers: { "Content-Type": "application/json" },
  });
}

/** Logs a request that failed with an exception (the app's 500 answer). */
function logFailure(method: string, path: string, err: unknown): void {
  log.error("request failed", { method, path, error: describeError(err) });
}

/** The methods the routes answer (preflights list only these). */
const CORS_METHODS = ["GET", "HEAD", "POST"];

/**
 * Response headers a browser page may read: the viewer's (`Content-Range` of a range request,
 * the owner's download rule, the file name) and the 401 challenge.
 */
export const CORS_EXPOSED_HEADERS = [
  "Content-Disposition",
  "Content-Range",
  "Content-Length",
  "Accept-Ranges",
  DOWNLOAD_RULE_HEADER,
  "WWW-Authenticate",
];

/** The path of `/health` (never checked: probes must always reach it). */
const HEALTH_PATH = "/health";

/**
 * Builds the HTTP app. Every route but `/health` checks the `Host` and `Origin` headers; with API
 * tokens, `/rpc` and `/events` need one (docs/access.md); the viewer's `/stream` needs its
 * `/auth` session token.
 */
export function createApp(deps: AppDeps): GatewayApp {
  const app = new Hono();
  const policy: AccessPolicy = { allowedHosts: deps.allowedHosts ?? [], cors: deps.cors };
  app.use("*", async (c, next): Promise<Response | void> => {
    if (c.req.path !== HEALTH_PATH) {
      const refused = refuseRequest(c.req.raw, policy);
      if (refused !== undefined) return refused;
    }
    await next();
  });
  if (deps.cors !== false) {
    app.use(
      "*",
      cors({
        origin: deps.cors === true ? "*" : [...deps.cors],
        allowMethods: CORS_METHODS,
        exposeHeaders: CORS_EXPOSED_HEADERS,
      }),
    );
  }
  const rpc = rpcRequestHandler(deps.services, deps.methods, {
    noteGarbage: deps.noteGarbage,
    tokens: deps.tokens,
  });
  app.post("/rpc", (c) => rpc(c.req.raw));
  app.get("/events", eventsHandler(deps.bus, deps.ssePingMs, deps.tokens));
  app.get("/health", healthHandler(() => deps.health(), deps.bus));
  app.post(
    "/auth",
    authRateLimit(deps.authRateLimit ?? new AuthRateLimit()),
    authHandler(deps.viewer.sessions),
  );
  const stream = streamRequestHandler(deps.viewer, deps.services.events);
  app.get("/stream/:msg_id", (c) => stream(c.req.raw, c.req.param("msg_id") ?? ""));
  for (const path of Object.keys(ROUTES) as (keyof typeof ROUTES)[]) {
    app.all(path, methodNotAllowed(path));
  }
  app.notFound((c) => c.json({ error: "not found", path: c.req.path }, 404));
  app.onError((err, c) => {
    if (err instanceof BodyReadError) {
      // the client's fault (cut short, bad chunked encoding): not worth more than a debug line
      log.debug("request body unreadable", { path: c.req.path, error: err.message });
      return c.json({ error: err.message }, 400);
    }
    logFailure(c.req.method, c.req.path, err);
    return c.json(INTERNAL_ERROR, 500);
  });
  /** The stream route without Hono: a failure gets the app's 500 answer and log line. */
  const streamFast = (req: Request, msgId: string) =>
    stream(req, msgId).catch((err) => {
      logFailure(req.method, `/stream/${msgId}`, err);
      return internalError();
    });
  // The fast paths skip Hono's middleware: they check the request themselves.
  const serverFetch: FetchHandler = deps.cors !== false ? app.fetch : withFastPaths(app.fetch, {
    rpc: (req) => {
      const refused = refuseRequest(req, policy);
      return refused === undefined ? rpc(req) : Promise.resolve(refused);
    },
    stream: (req, msgId) => {
      const refused = refuseRequest(req, policy);
      return refused === undefined ? streamFast(req, msgId) : Promise.resolve(refused);
    },
  });
  return Object.assign(app, { serverFetch });
}
