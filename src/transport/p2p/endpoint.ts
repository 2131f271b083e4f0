/** The direct-path endpoint: one UDP port for listening and dialing, the certificate, the sessions. */
import { P2pDefaults, P2pWire } from "../../constants.ts";
import { logger } from "../../log.ts";
import { encodeBase64Url } from "./base64url.ts";
import { type Candidate, formatCandidate, interfaceCandidates } from "./candidates.ts";
import { createCertificate, type LocalCertificate } from "./certificate.ts";
import type { ConnSettings } from "./dial.ts";
import { makeLink, tokensEqual } from "./link.ts";
import { checkDescription, checkOffer, type RefusedDescription } from "./offer.ts";
import { OnceLog } from "./once_log.ts";
import { ReceiveSession, SendSession, type SessionDeps } from "./session.ts";
import { queryStunMapping } from "./stun.ts";
import { withinMs } from "./timeout.ts";
import type {
  P2pAnswer,
  P2pOffer,
  P2pOutcome,
  P2pRunOptions,
  P2pSink,
  P2pSource,
} from "./types.ts";
import { FrameReader } from "./wire.ts";

/** How the endpoint is set up; every bound has a default (src/constants.ts P2pDefaults). */
export interface P2pEndpointOptions {
  /** Address to bind (default 0.0.0.0: every IPv4 interface). */
  hostname?: string;
  /** UDP port (default 0: an ephemeral one). */
  port?: number;
  /** A STUN server to learn the public mapping of the port from, once at open. */
  stun?: Candidate;
  /** Addresses to offer instead of the interfaces' (the STUN mapping is still added). */
  advertise?: Candidate[];
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  keepAliveMs?: number;
  maxAttempts?: number;
  /** Largest size a received offer may claim. */
  maxSize?: number;
  /** Milliseconds since the epoch (tests inject a clock). */
  now?: () => number;
  /** Where refusals are logged (once per transfer and reason). */
  log?: OnceLog;
}

/** What the sender holds after making an offer. */
export interface OutgoingTransfer {
  readonly offer: P2pOffer;
  /**
   * Connects (dialing the answer's candidates when given, accepting the receiver's dial anyway)
   * and sends. Without an answer only the receiver dials (no NAT traversal on our side).
   */
  run(answer: P2pAnswer | null, opts?: P2pRunOptions): Promise<P2pOutcome>;
  /** Forgets the offer: its token stops working. */
  cancel(): void;
}

/** What the receiver holds after accepting an offer. */
export interface IncomingTransfer {
  readonly answer: P2pAnswer;
  run(opts?: P2pRunOptions): Promise<P2pOutcome>;
  cancel(): void;
}

type AnySession = SendSession | ReceiveSession;
type Settings = Required<Omit<P2pEndpointOptions, "stun" | "advertise" | "hostname" | "port">>;

/** One QUIC endpoint shared by every direct transfer of the process. */
export class P2pEndpoint {
  readonly #ep: Deno.QuicEndpoint;
  #listener: Deno.QuicListener;
  #cert: LocalCertificate;
  readonly #sessions = new Map<string, AnySession>();
  /** When each session's offer or answer expires, for sessions whose run has not started. */
  readonly #unstarted = new Map<string, number>();
  readonly #settings: ConnSettings;
  readonly #opts: Settings;
  readonly #candidates: Candidate[];
  #closed = false;

  private constructor(
    ep: Deno.QuicEndpoint,
    cert: LocalCertificate,
    candidates: Candidate[],
    opts: Settings,
  ) {
    this.#ep = ep;
    this.#cert = cert;
    this.#candidates = candidates;
    this.#opts = opts;
    this.#settings = { idleTimeoutMs: opts.idleTimeoutMs, keepAliveMs: opts.keepAliveMs };
    this.#listener = this.#listen();
  }

  /** Binds the port (after asking the STUN server, when one is given, from the same port). */
  static async open(o: P2pEndpointOptions = {}): Promise<P2pEndpoint> {
    const hostname = o.hostname ?? "0.0.0.0";
    let port = o.port ?? 0;
    const now = o.now ?? Date.now;
    let mapped: Candidate | undefined;
    if (o.stun) {
      const r = await queryStunMapping({ hostname, port }, o.stun, P2pDefaults.STUN_TIMEOUT_MS);
      mapped = r.mapped;
      port = r.localPort;
      if (!mapped) {
        logger("p2p").warn("no answer from the STUN server", { stun: formatCandidate(o.stun) });
      }
    }
    const ep = new Deno.QuicEndpoint({ hostname, port });
    const bound = ep.addr.port;
    const candidates = [...(o.advertise ?? interfaceCandidates(hostname, bound))];
    if (
      mapped && !candidates.some((c) => c.hostname === mapped.hostname && c.port === mapped.port)
    ) {
      candidates.push(mapped);
    }
    const cert = await createCertificate(now(), P2pDefaults.CERT_VALIDITY_MS);
    return new P2pEndpoint(ep, cert, candidates.slice(0, P2pWire.MAX_CANDIDATES), {
      connectTimeoutMs: o.connectTimeoutMs ?? P2pDefaults.CONNECT_TIMEOUT_MS,
      idleTimeoutMs: o.idleTimeoutMs ?? P2pDefaults.IDLE_TIMEOUT_MS,
      keepAliveMs: o.keepAliveMs ?? P2pDefaults.KEEP_ALIVE_MS,
      maxAttempts: o.maxAttempts ?? P2pDefaults.MAX_ATTEMPTS,
      maxSize: o.maxSize ?? P2pDefaults.MAX_SIZE,
      now,
      log: o.log ?? new OnceLog(),
    });
  }

  /** The bound UDP port. */
  get port(): number {
    return this.#ep.addr.port;
  }

  /** The addresses offers carry (`ip:port`). */
  get candidates(): string[] {
    return this.#candidates.map(formatCandidate);
  }

  /** Makes an offer for a file and starts accepting the receiver's connection for it. */
  async offer(
    t: { transferId: string; size: number; sha256: string; source: P2pSource },
  ): Promise<OutgoingTransfer> {
    await this.#rotateIfDue();
    const token = crypto.getRandomValues(new Uint8Array(P2pWire.TOKEN_BYTES));
    const s = new SendSession(t.transferId, token, this.#deps(t.transferId), t.size, t.source);
    this.#register(s);
    const offer: P2pOffer = {
      v: P2pWire.VERSION,
      transfer_id: t.transferId,
      size: t.size,
      sha256: t.sha256,
      ...this.#describe(token),
    };
    return {
      offer,
      run: (answer, opts) => {
        if (answer) {
          const d = checkDescription(
            answer,
            this.#opts.now(),
            P2pDefaults.CERT_VALIDITY_MS + 120_000,
          );
          if ("refused" in d || d.transferId !== t.transferId) {
            this.#opts.log.refuse(
              "forged_offer",
              t.transferId,
              "refused" in d ? d.detail : "transfer id",
            );
          } else s.peer = d;
        }
        this.#unstarted.delete(t.transferId);
        return s.run(opts);
      },
      cancel: () => s.cancel(),
    };
  }

  /**
   * Checks an offer (shape, pin, size limit, expiry; refusals logged once) and, when it holds,
   * makes the answer and starts accepting the sender's connection for it.
   */
  async accept(offer: P2pOffer, sink: P2pSink): Promise<IncomingTransfer | RefusedDescription> {
    const d = checkOffer(
      offer,
      this.#opts.now(),
      P2pDefaults.CERT_VALIDITY_MS + 120_000,
      this.#opts.maxSize,
    );
    if ("refused" in d) {
      const id = typeof offer?.transfer_id === "string" ? offer.transfer_id : "?";
      this.#opts.log.refuse(d.refused, id, d.detail);
      return d;
    }
    await this.#rotateIfDue();
    const token = crypto.getRandomValues(new Uint8Array(P2pWire.TOKEN_BYTES));
    const s = new ReceiveSession(
      d.transferId,
      token,
      this.#deps(d.transferId),
      d,
      d.size,
      d.sha256,
      sink,
    );
    this.#register(s);
    const answer: P2pAnswer = {
      v: P2pWire.VERSION,
      transfer_id: d.transferId,
      ...this.#describe(token),
    };
    const run = (opts?: P2pRunOptions) => {
      this.#unstarted.delete(d.transferId);
      return s.run(opts);
    };
    return { answer, run, cancel: () => s.cancel() };
  }

  /** Closes the port; running transfers end (dropped). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of [...this.#sessions.values()]) s.cancel();
    try {
      this.#listener.stop();
    } catch {
      // already stopped
    }
    this.#ep.close({ closeCode: P2pWire.CLOSE_DONE, reason: "closing" });
  }

  #describe(token: Uint8Array) {
    return {
      candidates: this.candidates,
      cert: this.#cert.certB64,
      pin: this.#cert.pin,
      server_name: this.#cert.serverName,
      token: encodeBase64Url(token),
      expires_at: this.#opts.now() + P2pDefaults.OFFER_TTL_MS,
    };
  }

  #deps(transferId: string): SessionDeps {
    return {
      endpoint: this.#ep,
      settings: this.#settings,
      connectTimeoutMs: this.#opts.connectTimeoutMs,
      maxAttempts: this.#opts.maxAttempts,
      log: this.#opts.log,
      now: this.#opts.now,
      onEnd: () => {
        this.#sessions.delete(transferId);
        this.#unstarted.delete(transferId);
      },
    };
  }

  #register(s: AnySession): void {
    if (this.#sessions.has(s.transferId)) {
      throw new Error(`transfer ${s.transferId} is already running`);
    }
    this.#sessions.set(s.transferId, s);
    this.#unstarted.set(s.transferId, this.#opts.now() + P2pDefaults.OFFER_TTL_MS);
  }

  /** A new certificate when the current one runs short and no transfer relies on it. */
  async #rotateIfDue(): Promise<void> {
    const now = this.#opts.now();
    // Offers and answers never run expire with their `expires_at`: their tokens stop working.
    for (const [id, expiresAt] of this.#unstarted) {
      if (expiresAt < now) this.#sessions.get(id)?.cancel();
    }
    if (
      this.#cert.notAfter - now > P2pDefaults.CERT_ROTATE_REMAINING_MS || this.#sessions.size > 0
    ) return;
    this.#cert = await createCertificate(now, P2pDefaults.CERT_VALIDITY_MS);
    this.#listener.stop();
    this.#listener = this.#listen();
  }

  #listen(): Deno.QuicListener {
    const listener = this.#ep.listen({
      cert: this.#cert.certPem,
      key: this.#cert.keyPem,
      alpnProtocols: [P2pWire.ALPN],
      maxIdleTimeout: this.#settings.idleTimeoutMs,
      keepAliveInterval: this.#settings.keepAliveMs,
    });
    (async () => {
      try {
        for await (const incoming of listener) this.#onIncoming(incoming);
      } catch {
        // the listener stopped (rotation or close)
      }
    })();
    return listener;
  }

  /** Accepts a connection, reads its HELLO, checks transfer, role and token; admits or refuses. */
  async #onIncoming(incoming: Deno.QuicIncoming): Promise<void> {
    // Deno 2.9.5: reading `incoming.remoteAddr` before accept() invalidates the resource.
    let conn: Deno.QuicConn;
    try {
      conn = await incoming.accept();
    } catch {
      return; // the handshake failed (e.g. the dialer rejected our certificate)
    }
    const refuse = () => {
      try {
        conn.close({ closeCode: P2pWire.CLOSE_REFUSED, reason: "refused" });
      } catch {
        // already closed
      }
    };
    try {
      const streams = conn.incomingBidirectionalStreams.getReader();
      const first = await withinMs(streams.read(), P2pDefaults.HELLO_TIMEOUT_MS);
      streams.releaseLock();
      if (!first || first.done) return refuse();
      const reader = new FrameReader(first.value.readable);
      const hello = await withinMs(reader.hello(), P2pDefaults.HELLO_TIMEOUT_MS);
      if (!hello) {
        this.#opts.log.refuse("bad_hello", "?");
        return refuse();
      }
      const s = this.#sessions.get(hello.transferId);
      if (!s) {
        this.#opts.log.refuse("unknown_transfer", hello.transferId);
        return refuse();
      }
      const wantRole = s.kind === "send" ? P2pWire.ROLE_RECEIVER : P2pWire.ROLE_SENDER;
      // The token comparison runs in constant time whatever the role byte says.
      const tokenOk = tokensEqual(hello.token, s.ownToken);
      if (!tokenOk || hello.role !== wantRole) {
        this.#opts.log.refuse("wrong_token", hello.transferId);
        return refuse();
      }
      const writer = first.value.writable.getWriter();
      await writer.write(new Uint8Array([P2pWire.ACCEPTED]));
      s.admit(makeLink(conn, reader, writer, "accepted"));
    } catch {
      refuse();
    }
  }
}
