/**
 * A loopback TCP proxy that slows the server-to-client direction to a byte rate: for tests of
 * clients on a slow link (TLS passes through untouched). Stops its connections on `close()`.
 */

/** A running proxy. */
export interface ThrottleProxy extends AsyncDisposable {
  readonly port: number;
  close(): Promise<void>;
}

/** Proxies 127.0.0.1:<port> to `target`, delivering at most `bytesPerSecond` to the client. */
export function throttleProxy(target: number, bytesPerSecond: number): ThrottleProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const tasks: Promise<void>[] = [];
  const close = (c: Deno.Conn) => {
    try {
      c.close();
    } catch { /* closed */ }
  };
  const pipe = async (from: Deno.Conn, to: Deno.Conn, rate?: number) => {
    const buf = new Uint8Array(16 * 1024);
    try {
      for (;;) {
        const n = await from.read(buf);
        if (n === null) break;
        let off = 0;
        while (off < n) off += await to.write(buf.subarray(off, n));
        if (rate) await new Promise((r) => setTimeout(r, (n / rate) * 1000));
      }
    } catch { /* either side closed */ }
    close(from);
    close(to);
  };
  const accepting = (async () => {
    for await (const client of listener) {
      conns.add(client);
      const server = await Deno.connect({ hostname: "127.0.0.1", port: target });
      conns.add(server);
      tasks.push(pipe(client, server), pipe(server, client, bytesPerSecond));
    }
  })().catch(() => {});
  const stop = async () => {
    try {
      listener.close();
    } catch { /* closed */ }
    for (const c of conns) close(c);
    await accepting;
    await Promise.all(tasks);
  };
  return { port: (listener.addr as Deno.NetAddr).port, close: stop, [Symbol.asyncDispose]: stop };
}
