/**
 * The sending side of relay parts (docs/transfer.md#mails): a file above the one-mail limit to
 * capable gateways becomes the chat message with `Edge-Transfer` (recorded with the message) and
 * hidden part mails queued a few at a time, again on request, until every recipient answered.
 */
import { logger } from "../../log.ts";
import { Header, TransferAction } from "../../protocol.ts";
import type { ContactRecord, ResendRequest, TransferRecord } from "../../store/mod.ts";
import { blobPath } from "../blobs.ts";
import { MessageStates } from "../chats/message_states.ts";
import type { OutgoingDraft, RenderedMail } from "../send/rendered_mail.ts";
import { type DirectPath, NO_DIRECT_PATH } from "./direct_path.ts";
import { formatAnnounce, formatPart, newTransferId, type TransferControl } from "./headers.ts";
import { partLength, partPrefix, type TransferKit } from "./kit.ts";
import { sha256File, sha256Slice, sliceChunks } from "./partial_blob.ts";
import { renderTransferHead } from "./part_mail.ts";

const log = logger("transfer");

/** What the send pipeline does with a draft whose file goes as parts. */
export interface PartsSend {
  /** The draft to render: no file, the `Edge-Transfer` header added. */
  readonly draft: OutgoingDraft;
  /** Records the transfer with message `msgId` (in the transaction that stores it). */
  readonly record: (msgId: number) => void;
}

/** How the send pipeline's size decision (`decideSize`) cut a file into parts. */
export interface PartsPlan {
  /** Payload bytes of every part but the last. */
  readonly partSize: number;
  readonly parts: number;
}

/** A part header as long as any real one gets (its numbers at their longest). */
const LONGEST_PART_HEADER = formatPart({
  id: "f".repeat(32),
  index: Number.MAX_SAFE_INTEGER,
  offset: Number.MAX_SAFE_INTEGER,
  length: Number.MAX_SAFE_INTEGER,
  sha256: "f".repeat(64),
});

/** How an outgoing transfer ends. */
type OutEnd = "done" | "failed" | "cancelled";

/** The outgoing transfers of one account. */
export class OutgoingTransfers {
  readonly #states: MessageStates;
  #pumping: Promise<void> = Promise.resolve();
  /** Outgoing transfers offered to the direct strategy (once per process). */
  readonly #offered = new Set<string>();
  /** Those it took: no relay parts for them while this process runs. */
  readonly #direct = new Set<string>();

  /** The QUIC strategy, set by the manager once built (a strategy in the deps wins). */
  direct: DirectPath | undefined;

  constructor(private readonly kit: TransferKit) {
    this.#states = new MessageStates(kit.ctx);
  }

  /**
   * The size bound of one part mail to `recipients` with a payload of n bytes, as
   * `MailComposer.chatSizer` bounds a chat mail: what `decideSize` cuts parts by.
   */
  partSizer(recipients: readonly ContactRecord[]): (payloadBytes: number) => number {
    const { deps } = this.kit;
    const head = renderTransferHead({
      from: deps.selfAddr,
      to: recipients.map((r) => r.addr),
      messageId: deps.sealer.newMessageId(),
      date: new Date(this.kit.ctx.now()),
      header: [Header.EDGE_TRANSFER_PART, LONGEST_PART_HEADER],
    });
    return deps.sealer.sealedSizer(head.byteLength, recipients.length);
  }

  /**
   * The announcing draft of a file the size decision sends as parts (`plan`), and the record to
   * store with the message. Channel posts never go so (`decideSize` is not asked for them).
   */
  async prepare(
    draft: OutgoingDraft,
    recipients: readonly ContactRecord[],
    plan: PartsPlan,
  ): Promise<PartsSend> {
    const { ctx } = this.kit;
    const file = draft.file;
    if (file === undefined || draft.channel !== undefined) {
      throw new Error("only a chat message's file goes as relay parts");
    }
    const id = newTransferId();
    const sha256 = await sha256File(file.path);
    const mime = file.mime || "application/octet-stream";
    const header = formatAnnounce({
      id,
      size: file.bytes,
      sha256,
      partSize: plan.partSize,
      parts: plan.parts,
      name: file.name,
      mime,
    });
    const { file: _file, ...rest } = draft;
    return {
      draft: {
        ...rest,
        extraHeaders: [...(draft.extraHeaders ?? []), [Header.EDGE_TRANSFER, header]],
      },
      record: (msgId) => {
        ctx.store.transfers.insert({
          id,
          direction: "out",
          chatId: draft.chatId,
          msgId,
          name: file.name,
          mime,
          size: file.bytes,
          sha256,
          partSize: plan.partSize,
          parts: plan.parts,
          blob: file.blob,
          pending: recipients.map((r) => r.addr),
          now: ctx.now(),
        });
        log.info("file goes as relay parts", {
          transferId: id,
          bytes: file.bytes,
          parts: plan.parts,
        });
      },
    };
  }

  /** Queues due parts of every active outgoing transfer (one pass at a time). */
  pump(): Promise<void> {
    this.#pumping = this.#pumping.then(() => this.#pumpAll()).catch((err) =>
      log.warn("transfer parts could not be queued", { error: (err as Error).message })
    );
    return this.#pumping;
  }

  /** The direct strategy (none: relay parts only). */
  get #strategy(): DirectPath {
    return this.kit.deps.direct ?? this.direct ?? NO_DIRECT_PATH;
  }

  /** The direct strategy gave transfer `id` back: relay parts from now on. */
  #fallback(id: string, byRequest: boolean): void {
    if (!this.#direct.delete(id)) return;
    const { ctx } = this.kit;
    ctx.store.transfers.setPath("out", id, "", "relay");
    const t = ctx.store.transfers.get("out", id);
    // The receiver holds part of the file: every part counts as offered, it asks for the rest.
    if (byRequest && t?.state === "active" && t.nextPart === 0) {
      ctx.store.transfers.setQueued(id, t.parts, t.resend, ctx.now());
    }
    void this.pump();
  }

  /** Takes transfer `id` off the direct path (cancelled, ended, or parts asked for). */
  #undirect(id: string): boolean {
    if (!this.#direct.delete(id)) return false;
    this.#strategy.drop?.(id);
    this.kit.onDirect.delete(`out:${id}`);
    return true;
  }

  async #pumpAll(): Promise<void> {
    const { ctx, o } = this.kit;
    for (const t of ctx.store.transfers.active("out")) {
      if (ctx.now() - t.createdAt > o.outExpiryMs) {
        this.finish(t, "failed", "expired");
        continue;
      }
      if (ctx.store.msgs.get(t.msgId) === undefined) {
        this.finish(t, "cancelled", "message_deleted");
        await this.kit.sendControl(t.pending, { id: t.id, action: "refused", reason: "cancelled" });
        continue;
      }
      if (t.nextPart === 0 && t.resend.length === 0 && !this.#offered.has(t.id)) {
        this.#offered.add(t.id);
        const direct = await this.#strategy.offer({
          transferId: t.id,
          msgId: t.msgId,
          chatId: t.chatId,
          path: blobPath(ctx.blobDir, t.blob),
          size: t.size,
          sha256: t.sha256,
          recipients: t.pending,
        }, { fallback: (byRequest) => this.#fallback(t.id, byRequest) }).catch(() => false);
        if (direct) {
          this.#direct.add(t.id);
          this.kit.setPath(t, "direct");
        }
      }
      if (this.#direct.has(t.id)) continue; // the strategy reports and confirms on its own
      await this.#pumpOne(t);
    }
  }

  async #pumpOne(start: TransferRecord): Promise<void> {
    const { ctx, o } = this.kit;
    let t = start;
    const prefix = partPrefix(t.id);
    for (;;) {
      const queued = ctx.store.outbox.countByMidPrefix(prefix);
      this.#progress(t, queued);
      if (queued >= o.window) return;
      const asked = t.resend.find((r) => r.parts.length > 0);
      let index: number, to: readonly string[];
      if (asked !== undefined) {
        index = asked.parts[0];
        to = [asked.addr];
      } else if (t.nextPart < t.parts) {
        index = t.nextPart;
        to = t.pending;
      } else return;
      const mail = await this.#renderPart(t, index, to);
      const now = ctx.now();
      // Requests may have come in while the part rendered: the row is read again here, and only
      // the part just queued is taken off it.
      const active = ctx.tx.run(() => {
        const cur = ctx.store.transfers.get("out", t.id);
        if (cur === undefined || cur.state !== "active") return false;
        if (mail !== undefined) {
          ctx.store.outbox.enqueue({ msgId: 0, ...mail });
          ctx.tx.mailQueued();
          ctx.store.transfers.setPath("out", t.id, "", "relay");
        }
        const resend = asked === undefined
          ? cur.resend
          : cur.resend.map((r) =>
            r.addr === asked.addr ? { addr: r.addr, parts: r.parts.filter((i) => i !== index) } : r
          ).filter((r) => r.parts.length > 0);
        const next = asked === undefined ? Math.max(cur.nextPart, index + 1) : cur.nextPart;
        ctx.store.transfers.setQueued(t.id, next, resend, now);
        return true;
      });
      if (!active) {
        if (mail?.spool !== undefined) await ctx.spool.remove(mail.spool).catch(() => {});
        return;
      }
      t = ctx.store.transfers.get("out", t.id)!;
    }
  }

  async #renderPart(
    t: TransferRecord,
    index: number,
    to: readonly string[],
  ): Promise<RenderedMail | undefined> {
    const { ctx, deps } = this.kit;
    if (index >= t.parts) return undefined;
    const recipients = to.map((a) => this.kit.keyed(a)).filter((r) => r !== undefined);
    if (recipients.length === 0) return undefined;
    const offset = index * t.partSize;
    const length = partLength(t, index);
    const path = blobPath(ctx.blobDir, t.blob);
    // The mail's own Message-ID says nothing; the outbox row's names the transfer (the window).
    const messageId = deps.sealer.newMessageId();
    const head = renderTransferHead({
      from: deps.selfAddr,
      to: recipients.map((r) => r.addr),
      messageId,
      date: new Date(ctx.now()),
      header: [
        Header.EDGE_TRANSFER_PART,
        formatPart({
          id: t.id,
          index,
          offset,
          length,
          sha256: await sha256Slice(path, offset, length),
        }),
      ],
    });
    // The payload is read from the blob as a stream (hashed above, then signed and encrypted
    // into the spool), never held whole; a small part is sealed in memory.
    const mail = await deps.sealer.sealStream(
      {
        bytes: head.byteLength + length,
        async *open() {
          yield head;
          yield* sliceChunks(path, offset, length);
        },
      },
      recipients,
      messageId,
    );
    return { ...mail, rfc724Mid: `${partPrefix(t.id)}${index}-${messageId}` };
  }

  /** Progress out: the bytes of parts that left the outbox (the relay took them). */
  #progress(t: TransferRecord, queued: number): void {
    const sent = t.nextPart >= t.parts && queued === 0
      ? t.size
      : Math.min(t.size, Math.max(0, t.nextPart - queued) * t.partSize);
    if (!this.kit.throttle.due(`out:${t.id}`, sent, t.size)) return;
    this.kit.ctx.tx.emit({ kind: "TransferProgress", ...this.kit.fields(t, sent) });
  }

  /** Ends a transfer once: queued parts dropped, the event, a failed message marked failed. */
  finish(t: TransferRecord, state: OutEnd, reason: string): void {
    const { ctx } = this.kit;
    const spools = ctx.tx.run((emit) => {
      if (!ctx.store.transfers.finish("out", t.id, "", state, reason, ctx.now())) return [];
      const spools = ctx.store.outbox.removeByMidPrefix(partPrefix(t.id));
      if (state === "done") emit({ kind: "TransferDone", ...this.kit.fields(t, t.size) });
      else {
        emit({ kind: "TransferFailed", reason, ...this.kit.fields(t, 0) });
        if (ctx.store.msgs.get(t.msgId) !== undefined) {
          this.#states.markFailed(t.msgId, `file transfer ${state}: ${reason}`);
        }
      }
      return spools;
    });
    // Parts rendered into the spool go with their rows.
    for (const name of spools) void ctx.spool.remove(name).catch(() => {});
    this.kit.throttle.forget(`out:${t.id}`);
    this.#undirect(t.id);
    log.info("outgoing transfer ended", { transferId: t.id, state, reason });
  }

  /**
   * Cancels the outgoing transfer of message `msgId`: queued parts are dropped, recipients told;
   * false when it has none still running.
   */
  async cancel(msgId: number): Promise<boolean> {
    const t = this.kit.ctx.store.transfers.byMessage(msgId);
    if (t === undefined || t.direction !== "out" || t.state !== "active") return false;
    this.finish(t, "cancelled", "cancelled");
    await this.kit.sendControl(t.pending, { id: t.id, action: "refused", reason: "cancelled" });
    return true;
  }

  /** A pending recipient `addr` asked for parts, confirmed, or refused transfer `t`. */
  onControl(start: TransferRecord, addr: string, c: TransferControl): void {
    let t = start;
    const { ctx } = this.kit;
    switch (c.action) {
      case TransferAction.REQUEST: {
        // A request while the direct path carries the transfer: the receiver gave that path up
        // and holds the rest; every part counts as offered, those it asks for go out.
        if (this.#undirect(t.id)) {
          ctx.store.transfers.setQueued(t.id, t.parts, t.resend, ctx.now());
          ctx.store.transfers.setPath("out", t.id, "", "relay");
          t = ctx.store.transfers.get("out", t.id)!;
          log.info("the receiver left the direct path; relay parts take the rest", {
            transferId: t.id,
          });
        }
        // Parts not sent yet go out on the first pass anyway.
        const parts = c.parts.filter((i) => i < Math.min(t.parts, t.nextPart));
        if (parts.length === 0) return;
        const resend: ResendRequest[] = [
          ...t.resend.filter((r) => r.addr !== addr),
          { addr, parts },
        ];
        ctx.store.transfers.setResend(t.id, resend);
        log.info("parts asked for again", { transferId: t.id, parts: parts.length });
        return;
      }
      case TransferAction.DONE:
      case TransferAction.REFUSED: {
        // One member's refusal ends the transfer for that member only; the others go on.
        const refused = c.action === TransferAction.REFUSED;
        const why = refused ? `refused by ${addr}: ${c.reason}` : "";
        ctx.tx.run((emit) => {
          ctx.store.transfers.answered(t.id, addr, refused ? "refused" : "confirmed");
          if (refused) emit({ kind: "Warning", msg: `file transfer ${t.id}: ${why}` });
        });
        if (refused) log.warn("a recipient refused the file", { transferId: t.id, addr, why });
        const now = ctx.store.transfers.get("out", t.id)!;
        if (now.pending.length > 0) return;
        // Done when anyone has the file; failed when every recipient refused it.
        if (now.confirmed.length > 0) this.finish(now, "done", "");
        else this.finish(now, "failed", why);
        return;
      }
    }
  }
}
