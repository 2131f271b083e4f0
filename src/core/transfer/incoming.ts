/**
 * The receiving side of relay parts (docs/transfer.md#mails): checks an announcement (size, disk
 * space) and holds its chat message, writes verified parts into a partial blob, asks for missing
 * ones after a quiet time, checks the whole file, then shows the message once and confirms.
 */
import { logger } from "../../log.ts";
import type { TransferRecord } from "../../store/mod.ts";
import { blobName, blobPath } from "../blobs.ts";
import { parseAnnounce, parsePart } from "./headers.ts";
import { bit, countBits, partLength, type TransferKit } from "./kit.ts";
import { configuredRequestAfterMs } from "./options.ts";
import type { ShowAssembled } from "./options.ts";
import type { SpooledBody } from "../../mime/parser.ts";
import {
  copyInto,
  freeBytes,
  PARTIAL_PREFIX,
  partialName,
  partialPath,
  sha256File,
  sha256Hex,
  writeAt,
} from "./partial_blob.ts";

const log = logger("transfer");

/** What became of a transfer mail: taken (or dropped) quietly, or a receive error. */
export type TransferOutcome =
  | { readonly kind: "transfer"; readonly what: string }
  | { readonly kind: "rejected"; readonly reason: string };

/** A part's payload: in memory, or in the streamed reader's temp file (hashed on the way). */
export type PartPayload =
  | { readonly body: Uint8Array }
  | { readonly spooled: SpooledBody };

/** Most parts one request lists. */
const MAX_REQUEST_PARTS = 4096;

/** The incoming transfers of one account. */
export class IncomingTransfers {
  #show: ShowAssembled | undefined;
  /** Transfers being completed now (the sweep and reception may both get there). */
  readonly #completing = new Set<string>();
  /** Unix ms this process started: quiet time counts from here after a restart. */
  readonly #startedAt: number;

  constructor(private readonly kit: TransferKit) {
    this.#startedAt = kit.ctx.now();
  }

  /** Wires the reception step that shows a completed file (the receiver is built later). */
  setShow(show: ShowAssembled): void {
    this.#show = show;
  }

  /** An announcing chat message signed by `signer`, for chat `chatId` (0: not known yet). */
  async onAnnounce(
    signer: string,
    header: string,
    raw: Uint8Array,
    chatId: number,
  ): Promise<TransferOutcome> {
    const { ctx } = this.kit;
    const a = parseAnnounce(header);
    if (a === undefined) return { kind: "rejected", reason: "unreadable Edge-Transfer" };
    const contact = ctx.store.contacts.byFingerprint(signer);
    if (contact === undefined) {
      return { kind: "rejected", reason: "a transfer from an unknown key" };
    }
    if (ctx.store.transfers.get("in", a.id, signer) !== undefined) {
      return { kind: "transfer", what: "announce seen before" };
    }
    const refusal = this.#refusal(a.size, a.parts);
    const now = ctx.now();
    if (refusal !== undefined) {
      ctx.tx.run((emit) => {
        ctx.store.transfers.insert({ ...a, direction: "in", peerFingerprint: signer, chatId, now });
        ctx.store.transfers.finish("in", a.id, signer, "failed", refusal, now);
        emit({
          kind: "TransferFailed",
          reason: refusal,
          chatId,
          msgId: null,
          transferId: a.id,
          direction: "in",
          bytes: 0,
          total: a.size,
          path: "relay",
        });
        emit({ kind: "Warning", msg: `incoming file of ${a.size} bytes refused: ${refusal}` });
      });
      log.warn("incoming transfer refused", { transferId: a.id, bytes: a.size, reason: refusal });
      await this.kit.sendControl([contact.addr], { id: a.id, action: "refused", reason: refusal });
      return { kind: "transfer", what: `refused: ${refusal}` };
    }
    ctx.store.transfers.insert({
      ...a,
      direction: "in",
      peerFingerprint: signer,
      blob: partialName(a.id, signer),
      have: new Uint8Array(Math.ceil(a.parts / 8)),
      announce: raw,
      chatId,
      now,
    });
    log.info("incoming transfer accepted", { transferId: a.id, bytes: a.size, parts: a.parts });
    return { kind: "transfer", what: "announce" };
  }

  /** Why a file of `size` bytes cannot be taken, or undefined. */
  #refusal(size: number, parts: number): string | undefined {
    const { ctx, o } = this.kit;
    if (size > o.maxFileBytes || parts > 1_000_000) return "too_large";
    const free = freeBytes(ctx.blobDir);
    if (free !== undefined && free < size + o.diskReserveBytes) return "no_space";
    return undefined;
  }

  /** A part mail signed by `signer` with its payload (in memory, or in a temp file). */
  async onPart(signer: string, header: string, payload: PartPayload): Promise<TransferOutcome> {
    const { ctx, o } = this.kit;
    const p = parsePart(header);
    if (p === undefined) return { kind: "rejected", reason: "unreadable Edge-Transfer-Part" };
    const t = ctx.store.transfers.get("in", p.id, signer);
    if (t === undefined) return { kind: "transfer", what: "part of an unknown transfer" };
    if (t.state !== "active" || bit(t.have, p.index)) {
      return { kind: "transfer", what: "part seen before" };
    }
    const want = partLength(t, p.index);
    const bytes = "body" in payload ? payload.body.byteLength : payload.spooled.bytes;
    if (
      p.index >= t.parts || p.offset !== p.index * t.partSize || p.length !== want ||
      bytes !== want
    ) {
      return { kind: "rejected", reason: `transfer ${t.id}: part ${p.index} out of place` };
    }
    const sha256 = "body" in payload ? sha256Hex(payload.body) : payload.spooled.sha256;
    if (sha256 !== p.sha256) {
      return { kind: "rejected", reason: `transfer ${t.id}: part ${p.index} has a wrong hash` };
    }
    // The disk may have filled since the transfer was accepted: give up cleanly, sender told.
    const free = freeBytes(ctx.blobDir);
    if (free !== undefined && free < bytes + o.diskReserveBytes / 4) {
      await this.fail(t, "no_space");
      return { kind: "transfer", what: "refused: no_space" };
    }
    await Deno.mkdir(ctx.blobDir, { recursive: true });
    const partial = partialPath(ctx.blobDir, t.blob);
    if ("body" in payload) await writeAt(partial, p.offset, payload.body);
    else await copyInto(payload.spooled.path, partial, p.offset);
    const have = t.have.slice();
    have[p.index >> 3] |= 1 << (p.index & 7);
    const done = countBits(have, t.parts);
    ctx.tx.run((emit) => {
      ctx.store.transfers.setHave(t.id, signer, have, ctx.now());
      ctx.store.transfers.setPath("in", t.id, signer, "relay");
      const bytes = Math.min(t.size, done * t.partSize);
      if (this.kit.throttle.due(`in:${t.id}`, bytes, t.size)) {
        emit({ kind: "TransferProgress", ...this.kit.fields(t, bytes) });
      }
    });
    if (done === t.parts) await this.complete(ctx.store.transfers.get("in", t.id, signer)!);
    return { kind: "transfer", what: `part ${p.index}` };
  }

  /** Verifies the whole file, shows the message once, confirms to the sender. */
  async complete(t: TransferRecord): Promise<void> {
    const key = `${t.id}:${t.peerFingerprint}`;
    if (this.#completing.has(key)) return;
    this.#completing.add(key);
    try {
      await this.#completeOnce(t);
    } finally {
      this.#completing.delete(key);
    }
  }

  async #completeOnce(t: TransferRecord): Promise<void> {
    const { ctx } = this.kit;
    const current = ctx.store.transfers.get("in", t.id, t.peerFingerprint);
    if (current?.state !== "active") return;
    const partial = partialPath(ctx.blobDir, t.blob);
    const final = blobName(t.sha256, t.name);
    const finalPath = blobPath(ctx.blobDir, final);
    const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
    if (await exists(partial)) {
      if (await sha256File(partial) !== t.sha256) {
        await this.fail(t, "hash_mismatch");
        return;
      }
      await Deno.rename(partial, finalPath);
    } else if (!await exists(finalPath)) {
      // The file was verified and moved before a crash, or it is gone: nothing to show.
      await this.fail(t, "partial_lost");
      return;
    }
    const shown = await this.#show?.(t.announce, {
      blob: final,
      path: finalPath,
      name: t.name,
      mime: t.mime,
      bytes: t.size,
    });
    ctx.tx.run((emit) => {
      const msgId = shown?.msgId;
      if (
        !ctx.store.transfers.finish("in", t.id, t.peerFingerprint, "done", "", ctx.now(), msgId)
      ) {
        return;
      }
      const fields = this.kit.fields(
        { ...t, chatId: shown?.chatId ?? 0, msgId: msgId ?? 0 },
        t.size,
      );
      emit({ kind: "TransferDone", ...fields });
    });
    this.kit.throttle.forget(`in:${t.id}`);
    const sender = ctx.store.contacts.byFingerprint(t.peerFingerprint);
    if (sender) await this.kit.sendControl([sender.addr], { id: t.id, action: "done" });
    log.info("incoming transfer complete", { transferId: t.id, bytes: t.size });
  }

  /** Ends a transfer as failed: the event, the partial blob removed, the sender told. */
  async fail(t: TransferRecord, reason: string): Promise<void> {
    const { ctx } = this.kit;
    ctx.tx.run((emit) => {
      if (!ctx.store.transfers.finish("in", t.id, t.peerFingerprint, "failed", reason, ctx.now())) {
        return;
      }
      emit({ kind: "TransferFailed", reason, ...this.kit.fields(t, 0) });
    });
    await Deno.remove(partialPath(ctx.blobDir, t.blob)).catch(() => {});
    log.warn("incoming transfer failed", { transferId: t.id, reason });
    const sender = ctx.store.contacts.byFingerprint(t.peerFingerprint);
    if (sender) await this.kit.sendControl([sender.addr], { id: t.id, action: "refused", reason });
  }

  /**
   * Finishes transfers whose parts are all written (after a crash), asks for missing parts after
   * the quiet time, and gives up those asked for too often.
   */
  async sweep(): Promise<void> {
    const { ctx, o } = this.kit;
    const now = ctx.now();
    const requestAfterMs = configuredRequestAfterMs(ctx.store) ?? o.requestAfterMs;
    for (const t of ctx.store.transfers.active("in")) {
      if (countBits(t.have, t.parts) === t.parts) {
        await this.complete(t);
        continue;
      }
      // The direct path carries it now; it asks for parts itself if that path fails.
      if (this.kit.onDirect.has(`in:${t.id}`)) continue;
      // After a restart the parts that came meanwhile are still in INBOX: wait for them first.
      if (now - Math.max(t.updatedAt, this.#startedAt) < requestAfterMs) continue;
      if (t.requests >= o.maxRequests) {
        await this.fail(t, "expired");
        continue;
      }
      const missing: number[] = [];
      for (let i = 0; i < t.parts && missing.length < MAX_REQUEST_PARTS; i++) {
        if (!bit(t.have, i)) missing.push(i);
      }
      const sender = ctx.store.contacts.byFingerprint(t.peerFingerprint);
      if (sender === undefined) continue;
      ctx.store.transfers.noteRequest(t.id, t.peerFingerprint, now);
      await this.kit.sendControl([sender.addr], { id: t.id, action: "request", parts: missing });
      log.info("missing parts asked for", { transferId: t.id, parts: missing.length });
    }
  }

  /** Removes partial blobs no active transfer owns. */
  async removeOrphans(): Promise<void> {
    const { ctx } = this.kit;
    const keep = ctx.store.transfers.activePartials();
    try {
      for await (const e of Deno.readDir(ctx.blobDir)) {
        if (!e.isFile || !e.name.startsWith(PARTIAL_PREFIX) || keep.has(e.name)) continue;
        await Deno.remove(partialPath(ctx.blobDir, e.name)).catch(() => {});
        log.info("partial blob of an ended transfer removed", { name: e.name });
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}
