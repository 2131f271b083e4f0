/**
 * SSE fan-out benchmark server: the gateway's own app (createApp + EventBus, the code path of
 * GET /events, with the event journal) on a temporary store, plus `POST /publish?n=N&size=S`,
 * which publishes N events. With `--naive` it serves the baseline instead: one ReadableStream
 * enqueue per event.
 */
import { createAccountCore } from "../../src/account/core.ts";
import { blobDirOf } from "../../src/core/context.ts";
import { loadIdentity } from "../../src/core/contacts/identity.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { EventBus } from "../../src/events/bus.ts";
import type { LicenseSource } from "../../src/license/manager.ts";
import { EventJournal } from "../../src/events/journal.ts";
import { toWire } from "../../src/events/types.ts";
import { sseFrame } from "../../src/http/events_route.ts";
import { createApp } from "../../src/http/app.ts";
import { serviceHealth } from "../../src/http/health_route.ts";
import { parseConfig } from "../../src/config.ts";
import { buildMethodTable } from "../../src/rpc/methods/mod.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { ViewerSessions } from "../../src/viewer/session.ts";
import { noProtectedFiles } from "../../src/viewer/stream.ts";
import type { Services } from "../../src/services.ts";

const port = Number(Deno.args[0] ?? 7398);
const naive = Deno.args.includes("--naive");
const payload = (size: number) => "x".repeat(size);

async function gatewayHandler(): Promise<(req: Request) => Response | Promise<Response>> {
  const store = Store.open(":memory:");
  const addr = "bench@relay.test";
  store.config.set(ConfigKey.ADDR, addr);
  store.keys.add(await generateAccountKey(addr));
  const bus = new EventBus({ queueLimit: 100_000, journal: new EventJournal(store.events) });
  const noLicense = () => Promise.reject(new Error("the SSE bench manages no license"));
  const license: LicenseSource = {
    status: () => "no_license",
    isActive: () => false,
    reason: () => "",
    describe: () => ({ status: "no_license" }),
    activate: noLicense,
    sync: noLicense,
    deactivate: noLicense,
  };
  const config = parseConfig(["--data-dir", "/tmp/edge-bench-unused"], () => undefined);
  const services: Services = {
    config,
    store,
    events: bus,
    connectivity: { level: () => 4000 },
    license,
    startedAt: Date.now(),
    // The account's real core; the bench publishes events only, so it never sends or receives.
    core: createAccountCore({
      store,
      events: bus,
      blobDir: blobDirOf(config.dataDir),
      self: await loadIdentity(store),
      license,
    }),
    quarantine: {
      retryQuarantined: () => Promise.reject(new Error("the SSE bench receives no mail")),
    },
  };
  const app = createApp({
    services,
    methods: buildMethodTable(),
    bus,
    viewer: {
      sessions: new ViewerSessions({ fingerprint: "0", events: bus }),
      openProtectedFile: noProtectedFiles,
    },
    cors: false,
    ssePingMs: 15_000,
    health: serviceHealth(services),
  });
  return (req) => {
    const url = new URL(req.url);
    if (url.pathname !== "/publish") return app.fetch(req);
    const n = Number(url.searchParams.get("n") ?? 1000);
    const msg = payload(Number(url.searchParams.get("size") ?? 64));
    for (let i = 0; i < n; i++) bus.publish({ kind: "Info", msg });
    return new Response("published");
  };
}

function naiveHandler(): (req: Request) => Response {
  const clients = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const enc = new TextEncoder();
  let id = 0;
  return (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/publish") {
      const n = Number(url.searchParams.get("n") ?? 1000);
      const msg = payload(Number(url.searchParams.get("size") ?? 64));
      for (let i = 0; i < n; i++) {
        const frame = enc.encode(sseFrame({ id: ++id, event: toWire({ kind: "Info", msg }) }));
        for (const c of clients) c.enqueue(frame);
      }
      return new Response("published");
    }
    let ctl: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => void clients.add(ctl = c),
      cancel: () => void clients.delete(ctl),
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
}

Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log("listening") },
  naive ? naiveHandler() : await gatewayHandler(),
);
