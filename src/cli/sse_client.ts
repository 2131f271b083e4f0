/**
 * A Server-Sent Events client for `GET /events`: an incremental parser of the WHATWG framing and
 * a loop that reconnects with exponential back-off, resuming with `Last-Event-ID`.
 */
import { gatewayFetch, type HttpSettings, ProtocolError, unauthorizedHint } from "./rpc_client.ts";

/** One dispatched SSE event. */
export interface SseMessage {
  /** The last event id seen on the stream (ids are sticky per the SSE spec), if any. */
  readonly id: string | undefined;
  /** The `event:` field, `message` when absent. */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
}

/** Incremental SSE parser: feed text chunks, get complete events; comments are dropped. */
export class SseParser {
  #buffer = "";
  #data: string[] = [];
  #event = "";
  #lastId: string | undefined;
  /** The latest `retry:` value in ms, if the server sent one. */
  retryMs: number | undefined;

  /** Parses a chunk and returns the events it completed. */
  feed(chunk: string): SseMessage[] {
    this.#buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      // A lone trailing \r may be the first half of \r\n: wait for more input.
      if (match === null || (match[0] === "\r" && match.index === this.#buffer.length - 1)) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      const message = this.#line(line);
      if (message !== undefined) out.push(message);
    }
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#lastId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }

  #dispatch(): SseMessage | undefined {
    const data = this.#data;
    const event = this.#event;
    this.#data = [];
    this.#event = "";
    if (data.length === 0) return undefined;
    return { id: this.#lastId, event: event === "" ? "message" : event, data: data.join("\n") };
  }
}

/** Tuning of the reconnect loop. */
export interface ReconnectPolicy {
  /** First delay after a drop, in ms (a server `retry:` replaces it). */
  readonly initialMs: number;
  /** Upper bound of the doubling delay, in ms. */
  readonly maxMs: number;
  /** A connection silent for this long is treated as dead (the server pings every 15 s). */
  readonly idleMs: number;
}

/** Defaults: 0.5 s doubling to 30 s; 45 s of silence (three missed pings) means dead. */
export const DEFAULT_RECONNECT: ReconnectPolicy = { initialMs: 500, maxMs: 30_000, idleMs: 45_000 };

/** Options of `followEvents`. */
export interface FollowOptions {
  readonly http: HttpSettings;
  /** Resume after this event id on the first connection (`--since`). */
  readonly lastEventId?: string;
  readonly policy?: ReconnectPolicy;
  /** Receives every event in order; awaited before the next is read. */
  onEvent(message: SseMessage): Promise<void>;
  /** Receives one-line notices about drops and reconnects (for stderr). */
  onNotice(text: string): Promise<void>;
  /** Called each time a stream is open (HTTP 200), with the id it resumes after, if any. */
  onConnected?(resumeAfter: string | undefined): Promise<void>;
}

/** How the stream ended: the caller's signal fired, or the server said stop (HTTP 204). */
export type FollowEnd = "aborted" | "server-stop";

/**
 * Streams `/events` until `http.signal` aborts, reconnecting after drops with exponential
 * back-off and `Last-Event-ID` set to the last delivered event id. The first connection's
 * failure is thrown (UnreachableError or ProtocolError) so a wrong address fails fast; after
 * that, every failure is retried.
 */
export async function followEvents(options: FollowOptions): Promise<FollowEnd> {
  const policy = options.policy ?? DEFAULT_RECONNECT;
  const signal = options.http.signal;
  let lastId = options.lastEventId;
  let connectedOnce = false;
  let baseDelay = policy.initialMs;
  let delay = baseDelay;
  let deliveryError: { error: unknown } | undefined;
  while (!signal?.aborted) {
    const parser = new SseParser();
    let delivered = 0;
    try {
      const resumeAfter = lastId;
      const opened = async (streaming: boolean) => {
        connectedOnce = true;
        if (streaming) await options.onConnected?.(resumeAfter);
      };
      const end = await connectOnce(options, policy, parser, lastId, opened, async (message) => {
        if (message.id !== undefined) lastId = message.id;
        delivered++;
        try {
          await options.onEvent(message);
        } catch (error) {
          deliveryError = { error };
          throw error;
        }
      });
      if (end === "server-stop") return end;
      if (signal?.aborted) break;
      await options.onNotice(`event stream closed by the gateway${resumeNote(lastId)}`);
    } catch (err) {
      if (deliveryError !== undefined) throw deliveryError.error; // e.g. stdout closed
      if (signal?.aborted) break;
      if (!connectedOnce) throw err;
      await options.onNotice(`event stream failed: ${errorText(err)}${resumeNote(lastId)}`);
    }
    baseDelay = parser.retryMs ?? baseDelay; // a `retry:` field sets the reconnection time
    if (delivered > 0) delay = baseDelay; // the connection worked: start the back-off over
    await options.onNotice(`reconnecting in ${(delay / 1000).toFixed(1)} s`);
    await sleep(delay, signal);
    delay = Math.min(delay * 2, policy.maxMs);
  }
  return "aborted";
}

async function connectOnce(
  options: FollowOptions,
  policy: ReconnectPolicy,
  parser: SseParser,
  lastId: string | undefined,
  opened: (streaming: boolean) => Promise<void>,
  deliver: (message: SseMessage) => Promise<void>,
): Promise<"closed" | "server-stop"> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (lastId !== undefined) headers["last-event-id"] = lastId;
  const controller = new AbortController();
  const outer = options.http.signal;
  const onAbort = () => controller.abort();
  outer?.addEventListener("abort", onAbort, { once: true });
  let idle: ReturnType<typeof setTimeout> | undefined;
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(), policy.idleMs);
  };
  try {
    const http = { ...options.http, signal: controller.signal };
    const { response } = await gatewayFetch(http, "/events", { headers }, false);
    if (response.status === 204) {
      await response.body?.cancel();
      await opened(false);
      return "server-stop";
    }
    const type = response.headers.get("content-type") ?? "";
    if (response.status === 401) {
      await response.body?.cancel();
      throw new ProtocolError(`GET /events: ${unauthorizedHint(http)}`);
    }
    if (response.status !== 200 || !type.startsWith("text/event-stream")) {
      await response.body?.cancel();
      throw new ProtocolError(
        `GET /events answered HTTP ${response.status} (${type || "no content type"})`,
      );
    }
    await opened(true);
    if (response.body === null) return "closed";
    armIdle();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "closed";
        armIdle();
        for (const message of parser.feed(value)) await deliver(message);
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  } catch (err) {
    if (controller.signal.aborted && !outer?.aborted) {
      throw new ProtocolError(`no data for ${policy.idleMs / 1000} s (keepalive pings missing)`);
    }
    throw err;
  } finally {
    clearTimeout(idle);
    outer?.removeEventListener("abort", onAbort);
  }
}

function resumeNote(lastId: string | undefined): string {
  return lastId === undefined ? "" : ` (will resume after event ${lastId})`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Resolves after `ms`, or early when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
