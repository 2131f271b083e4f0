/** One transfer's run on either side: connect (dial and accept), move the bytes, resume on drops. */
import { createHash } from "node:crypto";
import { P2pWire } from "../../constants.ts";
import { type ConnSettings, dialCandidate } from "./dial.ts";
import type { Link } from "./link.ts";
import type { PeerDescription } from "./offer.ts";
import type { OnceLog } from "./once_log.ts";
import { youngGarbageHint } from "./gc_hint.ts";
import { progressThrottle } from "./progress.ts";
import { AsyncQueue } from "./queue.ts";
import { deadline, pause, withinMs } from "./timeout.ts";
import type { P2pFailure, P2pOutcome, P2pRunOptions, P2pSink, P2pSource } from "./types.ts";
import { encodeResume } from "./wire.ts";

/** What a session needs from its endpoint. */
export interface SessionDeps {
  endpoint: Deno.QuicEndpoint;
  settings: ConnSettings;
  connectTimeoutMs: number;
  maxAttempts: number;
  log: OnceLog;
  now: () => number;
  /** Called once when the run ends (the endpoint forgets the session and its token). */
  onEnd: () => void;
}

/** How long a dial that failed fast waits before it tries the candidate again. */
const REDIAL_MS = 500;

type Ended = { ok: true } | { ok: false; reason: P2pFailure; detail?: string } | "dropped";

/** What both sides share: the token peers must present, the queue of usable links, dialing. */
abstract class Session<Ready> {
  abstract readonly kind: "send" | "receive";
  protected readonly ready = new AsyncQueue<Ready>();
  protected wireBytes = 0;
  /** Frees the chunks already handed on, young (see gc_hint.ts). */
  protected readonly moved = youngGarbageHint();
  #ended = false;

  constructor(
    readonly transferId: string,
    readonly ownToken: Uint8Array,
    protected readonly deps: SessionDeps,
  ) {}

  /** A link whose peer proved itself (token checked by the listener, or pin by our dial). */
  abstract admit(link: Link): void;

  /** The role byte we send in HELLO when we dial. */
  protected abstract get role(): typeof P2pWire.ROLE_RECEIVER | typeof P2pWire.ROLE_SENDER;

  /** Dials every candidate until the signal aborts or a link is admitted. */
  protected dialAll(peer: PeerDescription | undefined, signal: AbortSignal): void {
    if (!peer) return;
    peer.candidates.forEach((_, i) => {
      (async () => {
        while (!signal.aborted) {
          const link = await dialCandidate(
            this.deps.endpoint,
            peer,
            i,
            this.role,
            this.deps.settings,
            this.deps.log,
          );
          if (link) {
            // A dial that completes after the run ended (or once another link won) is closed.
            if (this.#ended || (signal.aborted && this.ready.size > 0)) link.close();
            else this.admit(link);
            return;
          }
          await pause(REDIAL_MS, signal);
        }
      })();
    });
  }

  /** Waits for the next usable item within the connect bound, dialing meanwhile. */
  protected async connect(
    peer: PeerDescription | undefined,
    usable: (r: Ready) => boolean,
    signal: AbortSignal | undefined,
  ): Promise<Ready | undefined> {
    const dl = deadline(this.deps.connectTimeoutMs, signal);
    try {
      this.dialAll(peer, dl.signal);
      for (;;) {
        const r = await this.ready.take(dl.signal);
        if (r === undefined || usable(r)) return r;
      }
    } finally {
      dl.abort();
      dl.dispose();
    }
  }

  protected finish(
    ended: Exclude<Ended, "dropped"> | undefined,
    bytes: number,
    attempts: number,
    resumedFrom: number[],
  ): P2pOutcome {
    if (!this.#ended) {
      this.#ended = true;
      this.deps.onEnd();
    }
    for (const r of this.ready.close()) this.dispose(r);
    if (ended?.ok) return { ok: true, bytes, attempts, resumedFrom, wireBytes: this.wireBytes };
    const reason = ended ? ended.reason : attempts > 1 ? "dropped" : "connect_timeout";
    return {
      ok: false,
      reason,
      bytes,
      attempts,
      wireBytes: this.wireBytes,
      ...(ended && !ended.ok && ended.detail ? { detail: ended.detail } : {}),
    };
  }

  protected abstract dispose(r: Ready): void;

  /** Ends the session without a run (the endpoint forgets its token). */
  cancel(): void {
    this.finish({ ok: false, reason: "cancelled" }, 0, 0, []);
  }
}

/** The sender's side: serves the bytes from the offset the receiver asks for. */
export class SendSession extends Session<{ link: Link; offset: number }> {
  readonly kind = "send";
  peer: PeerDescription | undefined;

  constructor(
    transferId: string,
    ownToken: Uint8Array,
    deps: SessionDeps,
    private readonly size: number,
    private readonly source: P2pSource,
  ) {
    super(transferId, ownToken, deps);
  }

  protected get role() {
    return P2pWire.ROLE_SENDER;
  }

  admit(link: Link): void {
    // The receiver picks one link and writes RESUME on it; the others it closes.
    link.reader.resume().then((offset) => {
      if (offset === undefined) link.close();
      else this.ready.push({ link, offset });
    }, () => link.close());
  }

  protected dispose(r: { link: Link }): void {
    r.link.close();
  }

  /** Runs until the receiver confirms the whole file, or the bounds are exhausted. */
  async run(opts: P2pRunOptions = {}): Promise<P2pOutcome> {
    const report = progressThrottle(
      { transferId: this.transferId, direction: "out", total: this.size },
      opts.onProgress,
      this.deps.now,
    );
    const resumedFrom: number[] = [];
    let attempts = 0;
    while (attempts < this.deps.maxAttempts && !opts.signal?.aborted) {
      attempts++;
      const next = await this.connect(this.peer, (r) => !r.link.closed, opts.signal);
      if (!next) break;
      resumedFrom.push(next.offset);
      const ended = await this.#serve(next.link, next.offset, report);
      if (ended !== "dropped") return this.finish(ended, this.size, attempts, resumedFrom);
    }
    const cancelled = opts.signal?.aborted
      ? { ok: false as const, reason: "cancelled" as const }
      : undefined;
    return this.finish(cancelled, 0, attempts, resumedFrom);
  }

  async #serve(link: Link, offset: number, report: (b: number) => void): Promise<Ended> {
    if (offset > this.size) {
      link.close(P2pWire.CLOSE_REFUSED, "offset");
      return { ok: false, reason: "protocol", detail: "resume offset beyond the size" };
    }
    let stream: ReadableStream<Uint8Array>;
    try {
      stream = await this.source.open(offset);
    } catch (err) {
      link.close();
      return { ok: false, reason: "source_error", detail: String(err).slice(0, 160) };
    }
    const reader = stream.getReader();
    let pos = offset;
    try {
      while (pos < this.size) {
        if (this.ready.size > 0) throw new Error("the receiver moved to another connection");
        let chunk: Uint8Array | undefined;
        try {
          const r = await reader.read();
          chunk = r.done ? undefined : r.value;
        } catch (err) {
          link.close();
          return { ok: false, reason: "source_error", detail: String(err).slice(0, 160) };
        }
        if (!chunk) {
          link.close();
          return { ok: false, reason: "source_error", detail: "the source ended early" };
        }
        if (pos + chunk.length > this.size) chunk = chunk.subarray(0, this.size - pos);
        await link.writer.write(chunk);
        pos += chunk.length;
        this.wireBytes += chunk.length;
        this.moved(chunk.length);
        report(pos);
      }
      const done = await link.reader.exact(1);
      if (!done) throw new Error("no confirmation");
      link.close();
      if (done[0] === P2pWire.DONE_OK) return { ok: true };
      return { ok: false, reason: "hash_mismatch" };
    } catch {
      link.close();
      return "dropped";
    } finally {
      reader.cancel().catch(() => {});
    }
  }
}

/** The receiver's side: picks the first link, states its offset, stores and hashes the bytes. */
export class ReceiveSession extends Session<Link> {
  readonly kind = "receive";
  #active = false;

  constructor(
    transferId: string,
    ownToken: Uint8Array,
    deps: SessionDeps,
    private readonly peer: PeerDescription,
    private readonly size: number,
    private readonly sha256: string,
    private readonly sink: P2pSink,
  ) {
    super(transferId, ownToken, deps);
  }

  protected get role() {
    return P2pWire.ROLE_RECEIVER;
  }

  admit(link: Link): void {
    if (this.#active) link.close();
    else this.ready.push(link);
  }

  protected dispose(link: Link): void {
    link.close();
  }

  /** Runs until the whole file is stored and matches the offered SHA-256, or the bounds end. */
  async run(opts: P2pRunOptions = {}): Promise<P2pOutcome> {
    const report = progressThrottle(
      { transferId: this.transferId, direction: "in", total: this.size },
      opts.onProgress,
      this.deps.now,
    );
    const hash = createHash("sha256");
    let count: number;
    try {
      count = await this.sink.resumeOffset();
      if (!Number.isSafeInteger(count) || count < 0 || count > this.size) {
        throw new Error(`resume offset ${count} outside 0..${this.size}`);
      }
      if (count > 0) {
        let seen = 0;
        for await (const chunk of this.sink.readBack(count)) {
          hash.update(chunk);
          seen += chunk.length;
        }
        if (seen !== count) throw new Error("the sink gave back fewer bytes than it holds");
      }
    } catch (err) {
      return this.finish(
        { ok: false, reason: "source_error", detail: String(err).slice(0, 160) },
        0,
        0,
        [],
      );
    }
    const resumedFrom: number[] = [];
    let attempts = 0;
    while (attempts < this.deps.maxAttempts && !opts.signal?.aborted) {
      attempts++;
      const link = await this.connect(this.peer, (l) => !l.closed, opts.signal);
      if (!link) break;
      this.#active = true;
      for (const extra of this.ready.drain()) extra.close();
      resumedFrom.push(count);
      const r = await this.#receive(link, count, hash, report);
      count = r.count;
      this.#active = false;
      if (r.ended !== "dropped") return this.finish(r.ended, count, attempts, resumedFrom);
    }
    const cancelled = opts.signal?.aborted
      ? { ok: false as const, reason: "cancelled" as const }
      : undefined;
    return this.finish(cancelled, count, attempts, resumedFrom);
  }

  async #receive(
    link: Link,
    start: number,
    hash: ReturnType<typeof createHash>,
    report: (b: number) => void,
  ): Promise<{ ended: Ended; count: number }> {
    let count = start;
    try {
      await link.writer.write(encodeResume(start));
      while (count < this.size) {
        const chunk = await link.reader.chunk(this.size - count);
        if (!chunk) throw new Error("the stream ended early");
        try {
          await this.sink.write(chunk);
        } catch (err) {
          link.close(P2pWire.CLOSE_REFUSED, "sink");
          return {
            ended: { ok: false, reason: "source_error", detail: String(err).slice(0, 160) },
            count,
          };
        }
        hash.update(chunk);
        count += chunk.length;
        this.wireBytes += chunk.length;
        this.moved(chunk.length);
        report(count);
      }
    } catch {
      link.close();
      return { ended: "dropped", count };
    }
    const ok = hash.digest("hex") === this.sha256;
    try {
      await link.writer.write(new Uint8Array([ok ? P2pWire.DONE_OK : P2pWire.DONE_BAD_HASH]));
      await link.writer.close();
      await withinMs(link.conn.closed.catch(() => undefined), 2_000);
    } catch {
      // the sender may close first once it read the confirmation
    }
    link.close();
    return { ended: ok ? { ok: true } : { ok: false, reason: "hash_mismatch" }, count };
  }
}
