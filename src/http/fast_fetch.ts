/**
 * `Deno.serve`-level fast paths for `POST /rpc` and `GET /stream/<id>`: such requests go straight
 * to their framework-free handlers (`rpcRequestHandler`, `streamRequestHandler`), skipping Hono's
 * routing and Context (about 0.2 ms of a 1 MiB `/stream`); every other request goes to the app.
 * Only for apps without CORS (those headers come from the Hono middleware): `createApp` wires it
 * into its `serverFetch` when `--cors` is off.
 */

/** What `Deno.serve` takes as its handler (`info` carries the client's address). */
export type FetchHandler = (
  req: Request,
  info?: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/**
 * True when `url` (an absolute URL as `Request.url` spells it) has the path `/rpc` and neither
 * query nor fragment; found without `new URL()`. Anything else (`/rpc?x=1`, `/rpc/`, `/rpcx`,
 * `/%72pc`) is left to the app, whose router treats it as it always did.
 */
export function isExactRpcUrl(url: string): boolean {
  const end = url.length - 4;
  if (end < 0 || !url.endsWith("/rpc")) return false;
  // The first "/" after the scheme's "//" starts the path; it must be the one before "rpc".
  const scheme = url.indexOf("//");
  return scheme >= 0 && url.indexOf("/", scheme + 2) === end;
}

/** `/stream/` and a message id of 1 to 10 digits, nothing after it. */
const STREAM_PATH = /^\/stream\/(\d{1,10})$/;

/**
 * The message id of a URL whose path is exactly `/stream/<digits>` (1 to 10 of them) with
 * neither query nor fragment, found without `new URL()`; undefined for anything else (those
 * stay with the app's router: `/stream/12?x`, `/stream/12/`, `/stream/%31`, `/stream/abc`).
 */
export function exactStreamId(url: string): string | undefined {
  const scheme = url.indexOf("//");
  if (scheme < 0) return undefined;
  const path = url.indexOf("/", scheme + 2);
  if (path < 0) return undefined;
  return STREAM_PATH.exec(url.slice(path))?.[1];
}

/** The handlers of the fast paths; each must answer every request itself, failures included. */
export interface FastPaths {
  readonly rpc: (req: Request) => Promise<Response>;
  readonly stream: (req: Request, msgId: string) => Promise<Response>;
}

/**
 * Wraps `appFetch` so that `POST /rpc` (exactly: see `isExactRpcUrl`) is answered by `rpc` and
 * `GET /stream/<id>` (exactly: see `exactStreamId`) by `stream`. Everything else, including
 * `GET /rpc`, `/rpc?…`, `HEAD /stream/…` and `/stream/…?…`, goes to `appFetch`.
 */
export function withFastPaths(appFetch: FetchHandler, paths: FastPaths): FetchHandler {
  return (req, info) => {
    if (req.method === "POST") {
      if (isExactRpcUrl(req.url)) return paths.rpc(req);
    } else if (req.method === "GET") {
      const id = exactStreamId(req.url);
      if (id !== undefined) return paths.stream(req, id);
    }
    return appFetch(req, info);
  };
}
