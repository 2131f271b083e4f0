/**
 * SSE fan-out benchmark server: the gateway's own app (createApp + EventBus, the code path of
 * GET /events, with the event journal) on a temporary store, plus `POST /publish?n=N&size=S`,
 * which publishes N events. With `--naive` it serves the baseline instead: one ReadableStream
 * enqueue per event.
 */
import { EventBus } from "../../src/events/bus.ts";
import { EventJournal } from "../../src/events/journal.ts";
import { toWire } from "../../src/events/types.ts";
import { sseFrame } from "../../src/http/events_route.ts";
import { createApp } from "../../src/http/app.ts";
import { serviceHealth } from "../../src/http/health_route.ts";
import { parseConfig } from "../../src/config.ts";
import { buildMethodTable } from "../../src/rpc/methods/mod.ts";
import { Store } from "../../src/store/mod.ts";
import { ViewerSessions } from "../../src/viewer/session.ts";
import { noProtectedFiles } from "../../src/viewer/stream.ts";
import type { Services } from "../../src/services.ts";

const port = Number(Deno.args[0] ?? 7398);
const naive = Deno.args.includes("--naive");
const payload = (size: number) => "x".repeat(size);

function gatewayHandler(): (req: Request) => Response | Promise<Response> {
  const store = Store.open(":memory:");
  const bus = new EventBus({ queueLimit: 100_000, journal: new EventJournal(store.events) });
  const services: Services = {
    config: parseConfig(["--data-dir", "/tmp/edge-bench-unused"], () => undefined),
    store,
    events: bus,
    connectivity: { level: () => 4000 },
    license: { status: () => "no_license", isActive: () => false },
    startedAt: Date.now(),
    outgoing: {
      chat: {
        admit: () => Promise.reject(new Error("the SSE bench sends no mail")),
        render: () => Promise.reject(new Error("the SSE bench sends no mail")),
      },
      renderControl: () => Promise.reject(new Error("the SSE bench sends no mail")),
      oweReadReceipts: () => {},
    },
    secureJoin: {
      createInvite: () => "",
      join: () => Promise.reject(new Error("the SSE bench joins nothing")),
    },
    wakeSender: () => {},
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
  naive ? naiveHandler() : gatewayHandler(),
);
