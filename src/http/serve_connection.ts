/**
 * Serves HTTP on one accepted TCP connection with Deno's own server (the code behind
 * `Deno.serve`), so the daemon can run its own accept loop with limits (`guarded_server.ts`).
 *
 * Deno 2.9 has no public API for this: `Deno.serve` accepts inside the runtime, with no header
 * or idle timeouts, and ends its accept loop on the first accept error (EMFILE). The runtime's
 * `serveHttpOnConnection` (reached through `Deno[Deno.internal]`, as Deno's own tests reach it)
 * serves one connection exactly as `Deno.serve` serves each of its connections. Its only way to
 * close a connection at once is an abort signal whose listener throws once the connection has
 * ended by itself (an error inside an event listener ends the process), so the signal passed here
 * is a stand-in that keeps the listener and calls it inside a `try`.
 */

/** One connection being served. */
export interface ServedConnection {
  /** Settles when the connection has ended (rejects on a server error). */
  readonly finished: Promise<void>;
  /** Closes the connection now (idempotent; harmless once it has ended). */
  cut(): void;
}

/** The handler and error handler, as `Deno.serve` takes them. */
export type ConnectionHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

type ServeHttpOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: ConnectionHandler,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => { finished: Promise<void> };

/** The runtime's per-connection server, or undefined when this Deno has none. */
function runtimeServeOnConnection(): ServeHttpOnConnection | undefined {
  const deno = Deno as unknown as Record<string | symbol, unknown>;
  const key = deno.internal;
  if (typeof key !== "symbol") return undefined;
  const internals = deno[key] as Record<string, unknown> | undefined;
  const fn = internals?.serveHttpOnConnection;
  return typeof fn === "function" ? fn as ServeHttpOnConnection : undefined;
}

const serveOn = runtimeServeOnConnection();

/** True when this runtime can serve single connections (Deno 2.9 can). */
export const canServeConnections: boolean = serveOn !== undefined;

function noop(): void {}

/**
 * Serves `conn` with `handler`; `onError` answers a handler that threw. Throws when the runtime
 * cannot serve single connections (`canServeConnections` is false).
 */
export function serveConnection(
  conn: Deno.TcpConn,
  handler: ConnectionHandler,
  onError: (error: unknown) => Response | Promise<Response>,
): ServedConnection {
  if (serveOn === undefined) throw new Error("this Deno cannot serve single connections");
  let cancel: (() => void) | undefined;
  let cutDone = false;
  const signal = {
    addEventListener(_type: string, listener: () => void) {
      cancel = listener;
    },
  } as unknown as AbortSignal;
  const served = serveOn(conn, signal, handler, onError, noop);
  return {
    finished: served.finished,
    cut() {
      if (cutDone) return;
      cutDone = true;
      try {
        cancel?.();
      } catch {
        // the connection had ended already (its resource is gone): nothing to close
      }
    },
  };
}
