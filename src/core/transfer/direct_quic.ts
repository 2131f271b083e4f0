/**
 * The direct path over QUIC as the transfer layer's strategy (docs/transfer.md#direct-path): the
 * sender's offer and the receiver's answer travel in hidden transfer mails (encrypted and signed
 * like every control mail), both sides then run the endpoint's transfer; the bytes come from the
 * message's blob and go into the transfer's partial blob, part by part, so relay parts take over
 * from what arrived when the connection does not come up or fails.
 */
import { logger } from "../../log.ts";
import { Header } from "../../protocol.ts";
import type { TransferRecord } from "../../store/mod.ts";
import type {
  IncomingTransfer,
  OutgoingTransfer,
  P2pAnswer,
  P2pOffer,
} from "../../transport/p2p/mod.ts";
import type { DirectEndpoint, DirectHooks, DirectOffer, DirectPath } from "./direct_path.ts";
import { type DirectHeader, formatDirect, parseDirect, parseDirectBody } from "./direct_mail.ts";
import { blobSource, leadingBytes, PartialBlobSink } from "./direct_sink.ts";
import { bit, type TransferKit } from "./kit.ts";
import { partialPath } from "./partial_blob.ts";

const log = logger("transfer");

/** What became of a direct-path mail (as the manager's other transfer mails). */
export type DirectOutcome =
  | { readonly kind: "transfer"; readonly what: string }
  | { readonly kind: "rejected"; readonly reason: string };

/** The receiver's reply to an offer. */
type Reply = { answer: P2pAnswer } | { decline: string } | "dropped";

/** Most part indexes one request lists (as the relay sweep's). */
const MAX_REQUEST_PARTS = 4096;

/** Offers outgoing transfers over QUIC and answers incoming offers, for one account. */
export class QuicDirectPath implements DirectPath {
  /** Senders waiting for the answer to their offer, by transfer id. */
  readonly #waiting = new Map<string, (r: Reply) => void>();
  /** Outgoing runs by transfer id. */
  readonly #out = new Map<string, OutgoingTransfer>();
  /** Incoming runs by `id:fingerprint`, with the generation that started them. */
  readonly #in = new Map<string, { gen: number; run: IncomingTransfer }>();
  #gen = 0;

  constructor(
    private readonly kit: TransferKit,
    private readonly endpoint: DirectEndpoint | undefined,
    /** The incoming side's last step: verify the whole file, show the message, confirm. */
    private readonly complete: (t: TransferRecord) => Promise<void>,
  ) {}

  /** Whether this gateway's direct path is on (an endpoint is open). */
  get enabled(): boolean {
    return this.endpoint !== undefined;
  }

  async offer(o: DirectOffer, hooks: DirectHooks): Promise<boolean> {
    const { kit } = this;
    // Files below about 1 MB take the relay (docs/transfer.md#direct-path); groups take relay parts (one offer is for
    // one peer).
    if (this.endpoint === undefined || o.size < kit.o.directMinBytes) return false;
    if (o.recipients.length !== 1 || kit.keyed(o.recipients[0]) === undefined) return false;
    const to = o.recipients[0];
    let out: OutgoingTransfer;
    try {
      out = await this.endpoint.offer({
        transferId: o.transferId,
        size: o.size,
        sha256: o.sha256,
        source: blobSource(o.path, o.size),
      });
    } catch (err) {
      log.warn("no direct offer", { transferId: o.transferId, error: (err as Error).message });
      return false;
    }
    const reply = new Promise<Reply>((resolve) => this.#waiting.set(o.transferId, resolve));
    try {
      await this.#mail(to, {
        id: o.transferId,
        action: "offer",
        until: kit.ctx.now() + kit.o.directAnswerMs,
      }, out.offer);
    } catch (err) {
      this.#waiting.delete(o.transferId);
      out.cancel();
      log.warn("no direct offer", { transferId: o.transferId, error: (err as Error).message });
      return false;
    }
    this.#out.set(o.transferId, out);
    kit.onDirect.add(`out:${o.transferId}`);
    log.info("file offered over the direct path", { transferId: o.transferId, bytes: o.size });
    void this.#send(o.transferId, out, reply, hooks);
    return true;
  }

  /** Stops every wait for an answer (the process stops; nothing more is sent or recorded). */
  close(): void {
    for (const waiting of [...this.#waiting.values()]) waiting("dropped");
    this.#waiting.clear();
  }

  drop(transferId: string): void {
    this.#waiting.get(transferId)?.("dropped");
    this.#out.get(transferId)?.cancel();
    this.#out.delete(transferId);
  }

  /** The sender's side: the answer (or not), then the run; relay parts when it fails. */
  async #send(
    id: string,
    out: OutgoingTransfer,
    reply: Promise<Reply>,
    hooks: DirectHooks,
  ): Promise<void> {
    const { kit } = this;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([
      reply,
      new Promise<{ decline: string }>((resolve) => {
        timer = setTimeout(() => resolve({ decline: "no_answer" }), kit.o.directAnswerMs);
      }),
    ]);
    clearTimeout(timer);
    this.#waiting.delete(id);
    if (r === "dropped") return;
    if ("decline" in r) {
      out.cancel();
      this.#out.delete(id);
      kit.onDirect.delete(`out:${id}`);
      log.info("direct path not taken; the file goes as relay parts", {
        transferId: id,
        reason: r.decline,
      });
      hooks.fallback(false);
      return;
    }
    const outcome = await out.run(r.answer, {
      onProgress: (p) => {
        const t = kit.ctx.store.transfers.get("out", id);
        if (t?.state === "active") {
          kit.ctx.tx.emit({ kind: "TransferProgress", ...kit.fields(t, p.bytes) });
        }
      },
    });
    this.#out.delete(id);
    if (outcome.ok) {
      // The receiver's `done` mail ends the transfer, as for relay parts.
      log.info("file sent over the direct path", { transferId: id, attempts: outcome.attempts });
      return;
    }
    // Cancelled (the daemon stops), or dropped by the transfer layer (a request came, the
    // transfer ended) while the run wound down: nothing left to hand back.
    if (outcome.reason === "cancelled" || !kit.onDirect.has(`out:${id}`)) return;
    kit.onDirect.delete(`out:${id}`);
    log.info("direct path failed; relay parts take the transfer", {
      transferId: id,
      reason: outcome.reason,
    });
    // Bytes on the wire: the receiver may hold some, and asks for what it misses.
    hooks.fallback(outcome.wireBytes > 0);
  }

  /** A hidden direct-path mail from the verified signer `signer` with its body. */
  async receive(signer: string, header: string, body: Uint8Array): Promise<DirectOutcome> {
    const h = parseDirect(header);
    if (h === undefined) return { kind: "rejected", reason: "unreadable Edge-Transfer-Direct" };
    if (h.action === "offer") return await this.#onOffer(signer, h, body);
    // An answer or a decline: only from the pending recipient of our transfer, while we wait.
    const { store } = this.kit.ctx;
    const addr = store.contacts.byFingerprint(signer)?.addr ?? "";
    const out = store.transfers.get("out", h.id);
    const waiting = this.#waiting.get(h.id);
    if (out === undefined || !out.pending.includes(addr) || waiting === undefined) {
      return { kind: "transfer", what: "direct reply for no offer waiting" };
    }
    if (h.action === "decline") waiting({ decline: h.reason });
    else {
      const answer = parseDirectBody(body);
      waiting(answer === undefined ? { decline: "unreadable" } : { answer: answer as never });
    }
    return { kind: "transfer", what: `direct ${h.action}` };
  }

  /** The receiver's side: checks the offer against the announced transfer, answers, runs. */
  async #onOffer(
    signer: string,
    h: Extract<DirectHeader, { action: "offer" }>,
    body: Uint8Array,
  ): Promise<DirectOutcome> {
    const { ctx } = this.kit;
    const contact = ctx.store.contacts.byFingerprint(signer);
    if (contact === undefined) return { kind: "rejected", reason: "an offer from an unknown key" };
    const decline = async (reason: string): Promise<DirectOutcome> => {
      await this.#mail(contact.addr, { id: h.id, action: "decline", reason });
      return { kind: "transfer", what: `direct offer declined: ${reason}` };
    };
    // An offer for no transfer of this key gets no reply (nothing to amplify).
    const t = ctx.store.transfers.get("in", h.id, signer);
    if (t === undefined) return { kind: "transfer", what: "direct offer for no transfer" };
    // The sender stopped waiting (this mail came late): it sends relay parts already.
    if (ctx.now() > h.until) return { kind: "transfer", what: "direct offer too late" };
    if (this.endpoint === undefined) return await decline("off");
    if (t.state !== "active") return await decline("ended");
    const offer = parseDirectBody(body) as P2pOffer | undefined;
    // The offer must describe the file the signed announcement named.
    if (offer?.transfer_id !== t.id || offer.size !== t.size || offer.sha256 !== t.sha256) {
      return await decline("forged_offer");
    }
    const key = `${t.id}:${signer}`;
    this.#in.get(key)?.run.cancel(); // a newer offer (the sender restarted) replaces the old one
    this.#in.delete(key);
    const gen = ++this.#gen;
    await Deno.mkdir(ctx.blobDir, { recursive: true });
    const sink = new PartialBlobSink(
      partialPath(ctx.blobDir, t.blob),
      t,
      leadingBytes(t, t.have),
      (parts) => this.#recordParts(t, parts),
    );
    const run = await this.endpoint.accept(offer, sink).catch((err: Error) => err);
    if (run instanceof Error || "refused" in run) {
      // The endpoint logged its refusal once; this layer only tells the sender.
      return await decline(run instanceof Error ? "busy" : run.refused);
    }
    this.#in.set(key, { gen, run });
    this.kit.onDirect.add(`in:${t.id}`);
    this.kit.setPath(t, "direct");
    await this.#mail(contact.addr, { id: h.id, action: "answer" }, run.answer);
    log.info("direct offer accepted", { transferId: t.id, resumeFrom: await sink.resumeOffset() });
    void this.#receiveRun(t, key, gen, run, sink);
    return { kind: "transfer", what: "direct offer accepted" };
  }

  async #receiveRun(
    t: TransferRecord,
    key: string,
    gen: number,
    run: IncomingTransfer,
    sink: PartialBlobSink,
  ): Promise<void> {
    const { kit } = this;
    const { store } = kit.ctx;
    const outcome = await run.run({
      onProgress: (p) => {
        if (store.transfers.get("in", t.id, t.peerFingerprint)?.state !== "active") return;
        kit.ctx.tx.emit({ kind: "TransferProgress", ...kit.fields(t, p.bytes) });
      },
    }).catch((err: Error) => ({ ok: false as const, reason: "source_error", bytes: 0, err }));
    sink.close();
    if (this.#in.get(key)?.gen !== gen) return; // a newer offer took over
    this.#in.delete(key);
    if (!outcome.ok && outcome.reason === "cancelled") {
      kit.onDirect.delete(`in:${t.id}`);
      return; // the daemon stops: the next start resumes from the recorded parts
    }
    const cur = store.transfers.get("in", t.id, t.peerFingerprint);
    if (outcome.ok) {
      try {
        if (cur !== undefined) await this.complete(cur);
      } finally {
        kit.onDirect.delete(`in:${t.id}`);
      }
      return;
    }
    kit.onDirect.delete(`in:${t.id}`);
    if (cur?.state !== "active") return;
    kit.setPath(cur, "relay"); // relay parts take the rest (or all of it)
    log.info("direct path failed; relay parts take the rest", {
      transferId: t.id,
      reason: outcome.reason,
      bytes: outcome.bytes,
    });
    let have = cur.have;
    if (outcome.reason === "hash_mismatch") {
      // Nothing of this run can be trusted: start over from nothing, by relay parts.
      have = new Uint8Array(cur.have.byteLength);
      store.transfers.setHave(t.id, t.peerFingerprint, have, kit.ctx.now());
      await Deno.remove(partialPath(kit.ctx.blobDir, t.blob)).catch(() => {});
    } else if (outcome.bytes === 0 && !have.some((b) => b !== 0)) {
      return; // nothing arrived: the sender sends every part anyway
    }
    await this.#askMissing(cur, have);
  }

  /** Records parts `0..parts-1` as written (the sink synced them). */
  #recordParts(t: TransferRecord, parts: number): void {
    const { store } = this.kit.ctx;
    const cur = store.transfers.get("in", t.id, t.peerFingerprint);
    if (cur === undefined || cur.state !== "active") return;
    const have = cur.have.slice();
    for (let i = 0; i < parts; i++) have[i >> 3] |= 1 << (i & 7);
    store.transfers.setHave(t.id, t.peerFingerprint, have, this.kit.ctx.now());
  }

  /** Asks the sender for the parts missing now (it holds them back until asked). */
  async #askMissing(t: TransferRecord, have: Uint8Array): Promise<void> {
    const { ctx } = this.kit;
    const missing: number[] = [];
    for (let i = 0; i < t.parts && missing.length < MAX_REQUEST_PARTS; i++) {
      if (!bit(have, i)) missing.push(i);
    }
    const sender = ctx.store.contacts.byFingerprint(t.peerFingerprint);
    if (missing.length === 0 || sender === undefined) return;
    ctx.store.transfers.noteRequest(t.id, t.peerFingerprint, ctx.now());
    await this.kit.sendControl([sender.addr], { id: t.id, action: "request", parts: missing });
  }

  /** Queues a hidden direct-path mail to `to` (an offer or answer as its JSON body). */
  #mail(to: string, h: DirectHeader, body?: P2pOffer | P2pAnswer): Promise<void> {
    return this.kit.sendHidden(
      [to],
      [Header.EDGE_TRANSFER_DIRECT, formatDirect(h)],
      body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
    );
  }
}
