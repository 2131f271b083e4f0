/**
 * Builds the HTTP app over fake services for in-process tests (`app.request()`), with a test
 * fingerprint, an injectable clock and an injectable `openProtectedFile`.
 */
import { EventBus, type EventBusOptions } from "../../src/events/bus.ts";
import type { AllowedHosts, ApiTokens, CorsSetting } from "../../src/http/access.ts";
import { createApp } from "../../src/http/app.ts";
import type { AuthRateLimit } from "../../src/http/auth_rate_limit.ts";
import { serviceHealth } from "../../src/http/health_route.ts";
import { buildMethodTable } from "../../src/rpc/methods/mod.ts";
import { ViewerSessions } from "../../src/viewer/session.ts";
import { noProtectedFiles, type ViewerDeps } from "../../src/viewer/stream.ts";
import { fakeServices } from "../rpc/_fake_services.ts";

/** The fingerprint the test device has. */
export const TEST_FINGERPRINT = "0f".repeat(32);

/** Options of `testApp`. */
export interface TestAppOptions {
  readonly cors?: CorsSetting;
  readonly allowedHosts?: AllowedHosts;
  readonly tokens?: ApiTokens;
  readonly ssePingMs?: number;
  readonly license?: string;
  readonly bus?: EventBusOptions;
  readonly openProtectedFile?: ViewerDeps["openProtectedFile"];
  readonly tokenLifetimeMs?: number;
  readonly authRateLimit?: AuthRateLimit;
  readonly noteGarbage?: (bytes: number) => void;
}

/** An app plus the pieces tests inspect; call `close()` at the end. */
export function testApp(options: TestAppOptions = {}) {
  const bus = new EventBus(options.bus);
  const services = fakeServices({ license: options.license, bus });
  const clock = { now: Date.now() };
  const sessions = new ViewerSessions({
    fingerprint: TEST_FINGERPRINT,
    events: bus,
    ...(options.tokenLifetimeMs === undefined ? {} : { lifetimeMs: options.tokenLifetimeMs }),
    now: () => clock.now,
  });
  const viewer: ViewerDeps = {
    sessions,
    openProtectedFile: options.openProtectedFile ?? noProtectedFiles,
  };
  const app = createApp({
    services,
    methods: buildMethodTable(),
    bus,
    viewer,
    cors: options.cors ?? false,
    ssePingMs: options.ssePingMs ?? 60_000,
    health: serviceHealth(services),
    ...(options.authRateLimit === undefined ? {} : { authRateLimit: options.authRateLimit }),
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
    ...(options.tokens === undefined ? {} : { tokens: options.tokens }),
    ...(options.noteGarbage === undefined ? {} : { noteGarbage: options.noteGarbage }),
  });
  const close = () => {
    bus.close();
    services.store.close();
  };
  return { app, bus, services, sessions, clock, close };
}

/** Posts a JSON-RPC body to /rpc. */
export function postRpc(
  app: ReturnType<typeof testApp>["app"],
  body: unknown,
  headers: Record<string, string> = { "Content-Type": "application/json" },
): Promise<Response> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return Promise.resolve(app.request("/rpc", { method: "POST", headers, body: text }));
}

/** Status, every header, and the body bytes (hex): what "byte for byte" compares. */
export async function snapshot(res: Response) {
  return {
    status: res.status,
    headers: [...res.headers],
    body: [...new Uint8Array(await res.arrayBuffer())]
      .map((b) => b.toString(16).padStart(2, "0")).join(""),
  };
}

/** A viewer token from `POST /auth` with the test device's fingerprint. */
export async function viewerToken(app: ReturnType<typeof testApp>["app"]): Promise<string> {
  const res = await app.request("/auth", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ device_fingerprint: TEST_FINGERPRINT }),
  });
  if (res.status !== 200) throw new Error(`POST /auth answered ${res.status}`);
  return (await res.json()).token;
}
