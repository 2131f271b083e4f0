/**
 * A `Deno.serve`-level fast path for `POST /rpc`: such requests go straight to the
 * framework-free RPC handler (`rpcRequestHandler`), skipping Hono's routing and Context; every
 * other request goes to the app. Only for apps without CORS (those headers come from the Hono
 * middleware): `createApp` wires it into its `serverFetch` when `--cors` is off.
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

/**
 * Wraps `appFetch` so that `POST /rpc` (exactly: see `isExactRpcUrl`) is answered by `rpc`, which
 * must answer every request itself, failures included (`rpcRequestHandler` does). Everything
 * else, including `GET /rpc` and `/rpc?…`, goes to `appFetch`.
 */
export function withRpcFastPath(
  appFetch: FetchHandler,
  rpc: (req: Request) => Promise<Response>,
): FetchHandler {
  return (req, info) =>
    req.method === "POST" && isExactRpcUrl(req.url) ? rpc(req) : appFetch(req, info);
}
