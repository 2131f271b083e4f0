/**
 * The open connections of the HTTP server, each with its request phase and deadline
 * (`ServerLimits`). Kept apart from sockets, with an injected clock, so the rules are tested
 * without waiting: `sweep()` cuts every connection past its deadline.
 */
import type { ServerLimits } from "./server_limits.ts";

/** Why a connection was cut. */
export const CutReason = {
  /** A new connection sent no complete request headers in time. */
  HEADERS: "headers",
  /** A connection sat idle after its last response for too long. */
  KEEP_ALIVE: "keep-alive",
  /** A request's body (or the handler's answer) did not come in time. */
  REQUEST: "request",
} as const;
export type CutReason = typeof CutReason[keyof typeof CutReason];

/** One open connection, told by the server when its requests start and end. */
export interface TrackedConnection {
  /** A request's headers arrived (the handler is called). */
  requestStarted(): void;
  /** The handler has its response (or failed): the body upload is over. */
  responseReady(): void;
  /** The response was sent, or could not be. */
  responseDone(): void;
  /** The socket is closed: the connection no longer counts. */
  closed(): void;
  /**
   * The handler's promise for the request now receiving. If the request is cut while its
   * handler still waits for the body, the connection keeps counting until that promise settles.
   */
  handling(res: Promise<unknown>): void;
}

class Connection implements TrackedConnection {
  /** Requests whose handler has no response yet. */
  receiving = 0;
  /** Requests whose response is not sent yet. */
  inFlight = 0;
  served = false;
  /** When `receiving` became non-zero, or `inFlight` became zero. */
  since: number;
  cutBy: CutReason | undefined;
  /** The last handler promise (see `handling`). */
  #current: Promise<unknown> | undefined;
  /** Set when the connection was cut while its handler waited for a body. */
  #held: Promise<unknown> | undefined;

  constructor(
    private readonly tracker: ConnectionTracker,
    private readonly set: Set<Connection>,
    readonly cut: () => void,
  ) {
    this.since = tracker.now();
  }

  requestStarted(): void {
    if (this.receiving++ === 0) this.since = this.tracker.now();
    this.inFlight++;
    this.served = true;
  }

  responseReady(): void {
    if (this.receiving > 0) this.receiving--;
  }

  responseDone(): void {
    if (this.inFlight > 0 && --this.inFlight === 0) {
      this.since = this.tracker.now();
      if (this.tracker.draining) this.cut();
    }
  }

  handling(res: Promise<unknown>): void {
    this.#current = res;
  }

  /** Cuts the connection for `reason`. */
  cutFor(reason: CutReason): void {
    this.cutBy = reason;
    // Deno 2.9 cannot abandon a body read in progress: the socket stays open until the client
    // sends or closes, so the connection keeps counting against the cap until the handler ends.
    if (this.receiving > 0) this.#held = this.#current;
    this.cut();
  }

  closed(): void {
    const forget = () => void this.set.delete(this);
    if (this.#held === undefined) forget();
    else this.#held.then(forget, forget);
  }

  /** The rule this connection breaks at `now`, if any. */
  overdue(now: number, limits: ServerLimits): CutReason | undefined {
    if (this.receiving > 0) {
      return now - this.since > limits.requestTimeoutMs ? CutReason.REQUEST : undefined;
    }
    if (this.inFlight > 0) return undefined; // a response is being sent: SSE, a streamed file
    if (!this.served) {
      return now - this.since > limits.headersTimeoutMs ? CutReason.HEADERS : undefined;
    }
    return now - this.since > limits.keepAliveTimeoutMs ? CutReason.KEEP_ALIVE : undefined;
  }
}

/** The server's open connections under one set of limits. */
export class ConnectionTracker {
  readonly #open = new Set<Connection>();
  /** Connections cut so far, by reason. */
  readonly cuts: Record<CutReason, number> = { headers: 0, "keep-alive": 0, request: 0 };
  #draining = false;

  constructor(
    readonly limits: ServerLimits,
    readonly now: () => number = () => performance.now(),
  ) {}

  /** Connections open now (cut ones count until their socket is closed). */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Registers a new connection whose `cut()` closes it, or answers undefined when
   * `maxConnections` are open already (the caller closes it).
   */
  open(cut: () => void): TrackedConnection | undefined {
    if (this.#open.size >= this.limits.maxConnections) return undefined;
    const conn = new Connection(this, this.#open, cut);
    this.#open.add(conn);
    return conn;
  }

  /** Cuts every connection past its deadline; answers how many were cut now. */
  sweep(): number {
    const now = this.now();
    let count = 0;
    for (const conn of this.#open) {
      if (conn.cutBy !== undefined) continue;
      const reason = conn.overdue(now, this.limits);
      if (reason === undefined) continue;
      this.cuts[reason]++;
      count++;
      conn.cutFor(reason);
    }
    return count;
  }

  /** True once `drain()` was called. */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Starts a shutdown: cuts every connection with no response in progress now, and every other
   * one as soon as its last response is sent.
   */
  drain(): void {
    this.#draining = true;
    for (const conn of this.#open) if (conn.inFlight === 0) conn.cut();
  }

  /** Cuts every connection (the end of a shutdown that did not drain in time). */
  cutAll(): void {
    for (const conn of this.#open) conn.cut();
  }
}
