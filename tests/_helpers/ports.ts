/** Free TCP ports on 127.0.0.1, chosen by the kernel, for tests that need to listen somewhere. */

/** Returns a port on 127.0.0.1 that was free a moment ago. */
export function freePort(): number {
  return freePorts(1)[0];
}

/** Returns `count` distinct ports on 127.0.0.1 that were free a moment ago. */
export function freePorts(count: number): number[] {
  const listeners = Array.from(
    { length: count },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => l.addr.port);
  for (const l of listeners) l.close();
  return ports;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch (e) {
      if (Date.now() > deadline) {
        throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`, { cause: e });
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
