/**
 * Tests of the daemon's HTTP server over real sockets, with an injected clock: silent, partial
 * and idle connections are cut, streamed responses are not, the connection cap, accept failures,
 * and shutdown.
 */
import assert from "node:assert/strict";
import { type GuardedServer, serveGuarded } from "../../src/http/guarded_server.ts";
import type { ConnectionHandler } from "../../src/http/serve_connection.ts";
import type { ServerLimits } from "../../src/http/server_limits.ts";
import { setLogSink } from "../../src/log.ts";
import { poll } from "../_helpers/poll.ts";

const LIMITS: ServerLimits = {
  maxConnections: 100,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
};

interface Harness {
  server: GuardedServer;
  clock: { now: number };
  /** Moves the clock by `ms` and runs the deadline sweep; answers how many were cut. */
  advance(ms: number): number;
  connect(): Promise<Deno.TcpConn>;
  [Symbol.asyncDispose](): Promise<void>;
}

function start(
  handler: ConnectionHandler,
  opts: {
    limits?: Partial<ServerLimits>;
    accept?: (l: Deno.TcpListener) => Promise<Deno.TcpConn>;
    onConnectionClosed?: () => void;
  } = {},
): Harness {
  const clock = { now: 0 };
  const server = serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    limits: { ...LIMITS, ...opts.limits },
    handler,
    now: () => clock.now,
    sweepEveryMs: 3_600_000, // the test sweeps by hand
    acceptBackoffMs: { first: 1, max: 4 },
    ...(opts.accept === undefined ? {} : { accept: opts.accept }),
    ...(opts.onConnectionClosed === undefined
      ? {}
      : { onConnectionClosed: opts.onConnectionClosed }),
  });
  return {
    server,
    clock,
    advance(ms) {
      clock.now += ms;
      return server.sweep();
    },
    connect: () => Deno.connect({ hostname: "127.0.0.1", port: server.addr.port }),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function send(conn: Deno.Conn, text: string): Promise<void> {
  const bytes = encoder.encode(text);
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

/** Reads until the server closes the connection; answers what arrived. */
async function readToClose(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  for (;;) {
    let n: number | null;
    try {
      n = await conn.read(buf);
    } catch (err) {
      if (err instanceof Deno.errors.ConnectionReset) break;
      throw err;
    }
    if (n === null) break;
    text += decoder.decode(buf.subarray(0, n));
  }
  try {
    conn.close();
  } catch { /* closed */ }
  return text;
}

/** Reads until `text` has arrived (the connection stays open). */
async function readUntil(conn: Deno.Conn, text: string): Promise<string> {
  const buf = new Uint8Array(4096);
  let got = "";
  while (!got.includes(text)) {
    const n = await conn.read(buf);
    if (n === null) throw new Error(`connection closed before "${text}"; got ${got}`);
    got += decoder.decode(buf.subarray(0, n));
  }
  return got;
}

const waitOpen = (h: Harness, n: number) =>
  poll(() => Promise.resolve(h.server.stats().open), (v) => v === n, 10_000, 5);

const ok: ConnectionHandler = () => new Response("ok");

Deno.test("guarded server cuts silent connections and partial headers after the headers timeout", async () => {
  await using h = start(ok);
  const silent = await h.connect();
  const partial = await h.connect();
  await send(partial, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  assert.equal(await waitOpen(h, 2), 2);
  assert.equal(h.advance(LIMITS.headersTimeoutMs), 0, "not before the deadline");
  assert.equal(h.advance(1), 2);
  assert.equal(await readToClose(silent), "");
  assert.equal(await readToClose(partial), "");
  assert.equal(await waitOpen(h, 0), 0);
  assert.equal(h.server.stats().cuts.headers, 2);
});

Deno.test("guarded server cuts an idle keep-alive connection after the keep-alive timeout", async () => {
  let completed: Promise<void> | undefined;
  await using h = start((_req, info) => {
    completed = info.completed; // the server's own completion hook runs first
    return new Response("ok");
  });
  const conn = await h.connect();
  await send(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.match(await readUntil(conn, "ok"), /^HTTP\/1\.1 200/);
  await completed;
  // It served a request, so the shorter keep-alive rule applies, not the headers one.
  assert.equal(h.advance(LIMITS.keepAliveTimeoutMs), 0);
  assert.equal(h.advance(1), 1);
  assert.equal(await readToClose(conn), "");
  assert.equal(h.server.stats().cuts["keep-alive"], 1);
});

Deno.test("guarded server cuts a request whose body stalls and counts it until its read ends", async () => {
  const bodyRead = Promise.withResolvers<string>();
  const called = Promise.withResolvers<void>();
  await using h = start(async (req) => {
    called.resolve();
    try {
      await req.text();
      bodyRead.resolve("read");
    } catch (err) {
      bodyRead.resolve(err instanceof Error ? err.name : "?");
    }
    return new Response("late");
  });
  const conn = await h.connect();
  await send(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
  await called.promise;
  assert.equal(h.advance(LIMITS.requestTimeoutMs), 0);
  assert.equal(h.advance(1), 1);
  assert.equal(h.server.stats().cuts.request, 1);
  // Deno 2.9 cannot abandon the body read: the connection counts against the cap until the
  // client sends or closes, and then the handler's read fails.
  assert.equal(h.server.stats().open, 1);
  conn.close();
  assert.equal(await bodyRead.promise, "BadResource");
  assert.equal(await waitOpen(h, 0), 0);
});

Deno.test("guarded server never cuts a response in progress (SSE, streamed files)", async () => {
  const pushes: ReadableStreamDefaultController<Uint8Array>[] = [];
  await using h = start(() =>
    new Response(
      new ReadableStream<Uint8Array>({ start: (c) => void pushes.push(c) }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const conn = await h.connect();
  await send(conn, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  await poll(() => Promise.resolve(pushes.length), (n) => n === 1, 10_000, 5);
  pushes[0].enqueue(encoder.encode(": ping\n\n"));
  await readUntil(conn, ": ping");
  const hour = 3_600_000;
  assert.equal(h.advance(hour), 0);
  pushes[0].enqueue(encoder.encode("data: still here\n\n"));
  await readUntil(conn, "still here");
  pushes[0].close();
  conn.close();
});

Deno.test("guarded server refuses connections over the cap and serves again below it", async () => {
  await using h = start(ok, { limits: { maxConnections: 2 } });
  const a = await h.connect();
  const b = await h.connect();
  assert.equal(await waitOpen(h, 2), 2);
  const over = await h.connect();
  assert.equal(await readToClose(over), "");
  assert.equal(h.server.stats().refused, 1);
  a.close();
  assert.equal(await waitOpen(h, 1), 1);
  const c = await h.connect();
  await send(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  assert.match(await readToClose(c), /^HTTP\/1\.1 200[\s\S]*ok$/);
  b.close();
});

Deno.test("guarded server reports each served connection once it has ended, not refused ones", async () => {
  let closed = 0;
  await using h = start(ok, { limits: { maxConnections: 2 }, onConnectionClosed: () => closed++ });
  const a = await h.connect();
  const b = await h.connect();
  assert.equal(await waitOpen(h, 2), 2);
  assert.equal(await readToClose(await h.connect()), ""); // over the cap: refused
  assert.equal(closed, 0, "open connections are not reported");
  await send(a, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  assert.match(await readToClose(a), /^HTTP\/1\.1 200/);
  b.close();
  assert.equal(await waitOpen(h, 0), 0);
  await poll(() => Promise.resolve(closed), (n) => n === 2, 10_000, 5);
  assert.equal(closed, 2);
  assert.equal(h.server.stats().refused, 1);
});

Deno.test("guarded server survives failing accepts: logs the streak once and keeps serving", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    let failuresLeft = 3;
    await using h = start(ok, {
      accept: (l) => {
        if (failuresLeft-- > 0) {
          return Promise.reject(new Error("Too many open files (os error 24)"));
        }
        return l.accept();
      },
    });
    const conn = await h.connect();
    await send(conn, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert.match(await readToClose(conn), /^HTTP\/1\.1 200/);
    assert.equal(h.server.stats().acceptFailures, 3);
  } finally {
    setLogSink(prev);
  }
  const http = lines.filter((l) => l.includes("[http]"));
  assert.equal(http.length, 2, http.join("\n"));
  assert.match(http[0], /WARN .*accept failed; retrying with back-off .*Too many open files/);
  assert.match(http[1], /INFO .*accept works again failed_accepts=3/);
});

Deno.test("guarded server shutdown closes idle connections at once and lets a response finish", async () => {
  const pushes: ReadableStreamDefaultController<Uint8Array>[] = [];
  const h = start((req) =>
    req.url.endsWith("/stream")
      ? new Response(new ReadableStream<Uint8Array>({ start: (c) => void pushes.push(c) }))
      : new Response("ok")
  );
  const idle = await h.connect();
  const streaming = await h.connect();
  await send(streaming, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  await poll(() => Promise.resolve(pushes.length), (n) => n === 1, 10_000, 5);
  pushes[0].enqueue(encoder.encode("part one;"));
  await readUntil(streaming, "part one;");
  const stopped = h.server.shutdown();
  assert.equal(await readToClose(idle), "");
  pushes[0].enqueue(encoder.encode("part two"));
  pushes[0].close();
  assert.match(await readToClose(streaming), /part two/);
  await stopped;
  await assert.rejects(h.connect());
});
