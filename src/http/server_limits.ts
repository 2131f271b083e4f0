/**
 * The HTTP server's connection limits (docs/methods.md#http-limits): how many connections may be open,
 * and how long a connection may sit without a complete request or between requests.
 */

/** Limits the guarded server (`guarded_server.ts`) enforces per connection. */
export interface ServerLimits {
  /** Open connections at most; a connection over the cap is accepted and closed at once. */
  readonly maxConnections: number;
  /** A new connection must deliver its first request's headers within this many ms. */
  readonly headersTimeoutMs: number;
  /** A connection with no request in progress is closed this many ms after its last response. */
  readonly keepAliveTimeoutMs: number;
  /**
   * From a request's headers to the handler's response (the upload of the body included): a
   * client that sends its body too slowly, or not at all, is cut off. The response itself (an
   * SSE stream, a streamed file) is not bounded.
   */
  readonly requestTimeoutMs: number;
}

/** The daemon's limits. */
export const DEFAULT_SERVER_LIMITS: ServerLimits = Object.freeze({
  maxConnections: 512,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
});
