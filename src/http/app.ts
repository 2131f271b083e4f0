/**
 * The Hono application: the five routes of SPEC §4, CORS as one optional middleware, and JSON
 * answers for unknown paths (404), wrong methods (405) and unexpected failures (500).
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
import { eventsHandler } from "./events_route.ts";
import { healthHandler, type HealthReport } from "./health_route.ts";
import { rpcHandler } from "./rpc_route.ts";
import { authHandler, streamHandler, viewerAuth } from "./viewer_routes.ts";

const log = logger("http");

/** What the app is built from. */
export interface AppDeps {
  readonly services: Services;
  readonly methods: MethodTable;
  readonly bus: EventBus;
  readonly viewer: ViewerDeps;
  /** `--cors`: send CORS headers and answer preflights. */
  readonly cors: boolean;
  /** SSE keepalive interval in ms. */
  readonly ssePingMs: number;
  /** Cheap liveness report (no I/O). */
  health(): HealthReport;
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

/** Builds the HTTP app. No authentication on /rpc, /events and /health (SPEC §5). */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  if (deps.cors) {
    app.use("*", cors({ exposeHeaders: ["Content-Disposition", "WWW-Authenticate"] }));
  }
  app.post("/rpc", rpcHandler(deps.services, deps.methods));
  app.get("/events", eventsHandler(deps.bus, deps.ssePingMs));
  app.get("/health", healthHandler(() => deps.health(), deps.bus));
  app.post("/auth", authHandler(deps.viewer.sessions));
  app.get(
    "/stream/:msg_id",
    viewerAuth(deps.viewer.sessions),
    streamHandler(deps.viewer, deps.services.events),
  );
  for (const path of Object.keys(ROUTES) as (keyof typeof ROUTES)[]) {
    app.all(path, methodNotAllowed(path));
  }
  app.notFound((c) => c.json({ error: "not found", path: c.req.path }, 404));
  app.onError((err, c) => {
    log.error("request failed", {
      method: c.req.method,
      path: c.req.path,
      error: describeError(err),
    });
    return c.json({ error: "internal error" }, 500);
  });
  return app;
}
