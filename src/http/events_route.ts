/**
 * `GET /events`: the Server-Sent Events stream, framed here (not with Hono's writeSSE) so it can
 * send `: ping` comments and write every queued frame in one chunk per wake-up (docs/contract.md
 * §6).
 */
import type { Context } from "hono";
import type { EventBus, Subscription } from "../events/bus.ts";
import { LAG_EVENT, type SequencedEvent } from "../events/types.ts";
import { type ApiTokens, authorize } from "./access.ts";

/** The keepalive comment. */
export const PING_FRAME = ": ping\n\n";

/** Response headers of the stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache",
  "X-Accel-Buffering": "no",
};

const encoder = new TextEncoder();
/** One event goes to every subscriber as the same object: serialize it once. */
const frames = new WeakMap<SequencedEvent, string>();

/**
 * Frames one event: `id: <n>`, `data: <one-line wire JSON>`, blank line. Unnamed, so a browser's
 * `EventSource.onmessage` gets it; only `lag` is named (`event: lag`), as the product sends it.
 */
export function sseFrame(item: SequencedEvent): string {
  let frame = frames.get(item);
  if (frame === undefined) {
    const name = item.event.type === LAG_EVENT ? `event: ${LAG_EVENT}\n` : "";
    frame = `id: ${item.id}\n${name}data: ${JSON.stringify(item.event)}\n\n`;
    frames.set(item, frame);
  }
  return frame;
}

/**
 * Reads the resume point: the `Last-Event-ID` header (sent by EventSource on reconnect), else
 * the `lastEventId` query parameter (for curl). Anything but a decimal id is ignored.
 */
export function resumePoint(header: string | undefined, query: string | undefined) {
  const raw = (header ?? query)?.trim();
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

/**
 * Turns a subscription into the SSE byte stream. Pull-based (high-water mark 0): the next
 * frames are taken only when the client has consumed the previous chunk, so a slow client's
 * bus queue fills and it gets `lag` instead of the server buffering without bound. Pings go
 * out every `pingMs` whatever the traffic. Cancelling the stream closes the subscription.
 */
export function eventStream(
  sub: Subscription,
  pingMs: number,
  now: () => number = Date.now,
): ReadableStream<Uint8Array> {
  let nextPing = now() + pingMs;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const wait = new AbortController();
        const timer = setTimeout(() => wait.abort(), Math.max(0, nextPing - now()));
        let items: SequencedEvent[];
        try {
          items = await sub.next(wait.signal);
        } finally {
          clearTimeout(timer);
        }
        if (cancelled) return;
        if (sub.closed) {
          controller.close(); // the bus shut down: end the response
          return;
        }
        let chunk = "";
        for (const item of items) chunk += sseFrame(item);
        if (now() >= nextPing) {
          chunk += PING_FRAME;
          nextPing = now() + pingMs;
        }
        if (chunk !== "") {
          controller.enqueue(encoder.encode(chunk));
          return;
        }
      }
    },
    cancel() {
      cancelled = true;
      sub.close();
    },
  }, { highWaterMark: 0 });
}

/**
 * Builds the `/events` handler; `HEAD` gets the headers without opening a subscription.
 * Deno.serve cancels the body when the client disconnects, which closes the subscription
 * (`request.signal` is not used: it also fires after successful responses). With API `tokens`,
 * a request without a valid token (`Authorization: Bearer`, or `?access_token=` since
 * EventSource sends no headers) gets 401; any scope may read the events.
 */
export function eventsHandler(bus: EventBus, pingMs: number, tokens?: ApiTokens) {
  return (c: Context): Response => {
    if (tokens !== undefined) {
      const auth = authorize(c.req.raw, tokens, true, (error) => ({ error }));
      if (auth.refused !== undefined) return auth.refused;
    }
    if (c.req.method === "HEAD") return new Response(null, { headers: SSE_HEADERS });
    const lastEventId = resumePoint(c.req.header("last-event-id"), c.req.query("lastEventId"));
    const sub = bus.subscribe(lastEventId === undefined ? {} : { lastEventId });
    return new Response(eventStream(sub, pingMs), { headers: SSE_HEADERS });
  };
}
