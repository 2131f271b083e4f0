/**
 * Relay parts, both sides (docs/transfer.md). Sender: a file above the one-mail limit to capable
 * gateways becomes the chat message with `Edge-Transfer` (recorded with the message) and hidden
 * part mails queued a few at a time, again on request, until every recipient confirmed. Receiver:
 * checks the announcement (size, disk space), writes verified parts into a partial blob, asks for
 * missing ones after a quiet time, checks the whole file, then shows the message once.
 */
import { logger } from "../../log.ts";
import { Header, TransferAction } from "../../protocol.ts";
import type { ContactRecord, ResendRequest, TransferRecord } from "../../store/mod.ts";
import { type BlobFile, blobName, blobPath } from "../blobs.ts";
import type { CoreContext } from "../context.ts";
import { MessageStates } from "../chats/message_states.ts";
import { assignChat } from "../receive/assignment.ts";
import type { ReadMail } from "../receive/mail_reader.ts";
import type { KeyedRecipient } from "../send/mail_composer.ts";
import type { OutgoingDraft, RenderedMail } from "../send/rendered_mail.ts";
import { type DirectPath, NO_DIRECT_PATH } from "./direct_path.ts";
import {
  formatAnnounce,
  formatControl,
  formatPart,
  newTransferId,
  parseAnnounce,
  parseControl,
  parsePart,
  type TransferControl,
} from "./headers.ts";
import { configuredRequestAfterMs, relayMessageLimit } from "./limit.ts";
import {
  freeBytes,
  PARTIAL_PREFIX,
  partialName,
  partialPath,
  readAt,
  sha256File,
  sha256Hex,
  writeAt,
} from "./partial_blob.ts";
import { renderTransferMail } from "./part_mail.ts";
import { planFileDelivery } from "./plan.ts";
import { ProgressThrottle } from "./progress.ts";

const log = logger("transfer");

/** How often the blob directory is searched for partial blobs no transfer owns. */
const ORPHAN_CHECK_MS = 10 * 60_000;

/** Timings and bounds (docs/transfer.md#timeouts). */
export interface TransferOptions {
  /** Part mails of one transfer in the outbox at a time. */
  readonly window: number;
  /** Quiet time after which a receiver asks for its missing parts again. */
  readonly requestAfterMs: number;
  /** Requests a receiver sends before it gives the transfer up. */
  readonly maxRequests: number;
  /** The sender keeps answering requests this long after the message was sent. */
  readonly outExpiryMs: number;
  /** The largest file a receiver accepts. */
  readonly maxFileBytes: number;
  /** Free space a receiver keeps besides the file. */
  readonly diskReserveBytes: number;
}

export const DEFAULT_TRANSFER_OPTIONS: TransferOptions = {
  window: 2,
  requestAfterMs: 5 * 60_000,
  maxRequests: 50,
  outExpiryMs: 7 * 24 * 3_600_000,
  maxFileBytes: 64 * 1024 ** 3,
  diskReserveBytes: 256 * 1024 * 1024,
};

/** What the manager needs from the account's mail composer. */
export interface TransferSealer {
  newMessageId(): string;
  seal(
    inner: Uint8Array,
    to: readonly KeyedRecipient[],
    messageId: string,
  ): Promise<RenderedMail>;
}

/** Shows a completed incoming file: the announcing mail with the assembled blob. */
export type ShowAssembled = (
  announce: Uint8Array,
  file: BlobFile,
) => Promise<{ msgId: number; chatId: number } | undefined>;

/** Inputs of {@link TransferManager}. */
export interface TransferDeps {
  readonly ctx: CoreContext;
  readonly selfAddr: string;
  readonly sealer: TransferSealer;
  readonly options?: Partial<TransferOptions> | undefined;
  readonly direct?: DirectPath | undefined;
}

/** The state `get_transfer` reports. */
export interface TransferView {
  readonly transferId: string;
  readonly direction: "out" | "in";
  readonly state: TransferRecord["state"];
  readonly reason: string;
  readonly bytes: number;
  readonly total: number;
  readonly parts: number;
  readonly partsDone: number;
  readonly path: "relay" | "direct";
  /** Out: recipients that have not confirmed yet. */
  readonly pending: readonly string[];
}

/** What the send pipeline does with a draft whose file goes as parts. */
export interface PartsSend {
  /** The draft to render: no file, the `Edge-Transfer` header added. */
  readonly draft: OutgoingDraft;
  /** Records the transfer with message `msgId` (in the transaction that stores it). */
  readonly record: (msgId: number) => void;
}

function bit(have: Uint8Array, i: number): boolean {
  return ((have[i >> 3] ?? 0) & (1 << (i & 7))) !== 0;
}

function countBits(have: Uint8Array, parts: number): number {
  let n = 0;
  for (let i = 0; i < parts; i++) if (bit(have, i)) n++;
  return n;
}

/** Lengths of part `index` of a transfer. */
function partLength(t: { size: number; partSize: number }, index: number): number {
  return Math.max(0, Math.min(t.partSize, t.size - index * t.partSize));
}

/** The prefix of a transfer's part rows in the outbox (never on the wire). */
function partPrefix(id: string): string {
  return `t-${id}-`;
}

/** Sends and receives files as relay parts for one account. */
export class TransferManager {
  readonly #o: TransferOptions;
  readonly #throttle: ProgressThrottle;
  readonly #states: MessageStates;
  #show: ShowAssembled | undefined;
  #pumping: Promise<void> = Promise.resolve();
  /** Outgoing transfers offered to the direct strategy (once per process). */
  #offered = new Set<string>();
  /** Those it took: no relay parts for them while this process runs. */
  #direct = new Set<string>();
  /** Incoming transfers being completed now (the sweep and reception may both get there). */
  #completing = new Set<string>();
  /** Unix ms of the last look for partial blobs no transfer owns. */
  #orphansCheckedAt = -Infinity;

  /** Unix ms this manager started: quiet time counts from here after a restart. */
  readonly #startedAt: number;

  constructor(private readonly deps: TransferDeps) {
    this.#o = { ...DEFAULT_TRANSFER_OPTIONS, ...deps.options };
    this.#startedAt = deps.ctx.now();
    this.#throttle = new ProgressThrottle(() => deps.ctx.now());
    this.#states = new MessageStates(deps.ctx);
  }

  get #ctx(): CoreContext {
    return this.deps.ctx;
  }

  /** Wires the reception step that shows a completed file (the receiver is built later). */
  setShow(show: ShowAssembled): void {
    this.#show = show;
  }

  // ---- send side ----

  /**
   * Plans a rendered draft: undefined when its file (if any) goes in the chat mail itself, else
   * the announcing draft and the record to store with the message.
   */
  async prepareOutgoing(
    draft: OutgoingDraft,
    recipients: readonly ContactRecord[],
  ): Promise<PartsSend | undefined> {
    const file = draft.file;
    // Channel posts stay one mail (symmetric encryption to subscribers, docs/transfer.md).
    if (file === undefined || draft.channel !== undefined) return undefined;
    const capable = recipients.map((r) => this.#ctx.store.contacts.hasLargeFiles(r.id));
    const plan = planFileDelivery(file.bytes, relayMessageLimit(this.#ctx.store), capable);
    if (plan.kind !== "parts") return undefined;
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
        this.#ctx.store.transfers.insert({
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
          now: this.#ctx.now(),
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

  async #pumpAll(): Promise<void> {
    for (const t of this.#ctx.store.transfers.active("out")) {
      if (this.#ctx.now() - t.createdAt > this.#o.outExpiryMs) {
        this.#finishOut(t, "failed", "expired");
        continue;
      }
      const msg = this.#ctx.store.msgs.get(t.msgId);
      if (msg === undefined) {
        this.#finishOut(t, "cancelled", "message_deleted");
        await this.#sendControl(t.pending, { id: t.id, action: "refused", reason: "cancelled" });
        continue;
      }
      if (t.nextPart === 0 && t.resend.length === 0 && !this.#offered.has(t.id)) {
        this.#offered.add(t.id);
        const direct = await (this.deps.direct ?? NO_DIRECT_PATH).offer({
          transferId: t.id,
          msgId: t.msgId,
          chatId: t.chatId,
          path: blobPath(this.#ctx.blobDir, t.blob),
          size: t.size,
          sha256: t.sha256,
          recipients: t.pending,
        }).catch(() => false);
        if (direct) this.#direct.add(t.id);
      }
      if (this.#direct.has(t.id)) continue; // the strategy reports and confirms on its own
      await this.#pumpOne(t);
    }
  }

  async #pumpOne(start: TransferRecord): Promise<void> {
    let t = start;
    const prefix = partPrefix(t.id);
    for (;;) {
      const queued = this.#ctx.store.outbox.countByMidPrefix(prefix);
      this.#progressOut(t, queued);
      if (queued >= this.#o.window) return;
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
      const now = this.#ctx.now();
      // Requests may have come in while the part rendered: the row is read again here, and only
      // the part just queued is taken off it.
      const active = this.#ctx.tx.run(() => {
        const cur = this.#ctx.store.transfers.get("out", t.id);
        if (cur === undefined || cur.state !== "active") return false;
        if (mail !== undefined) {
          this.#ctx.store.outbox.enqueue({ msgId: 0, ...mail });
          this.#ctx.tx.mailQueued();
        }
        const resend = asked === undefined
          ? cur.resend
          : cur.resend.map((r) =>
            r.addr === asked.addr ? { addr: r.addr, parts: r.parts.filter((i) => i !== index) } : r
          ).filter((r) => r.parts.length > 0);
        const next = asked === undefined ? Math.max(cur.nextPart, index + 1) : cur.nextPart;
        this.#ctx.store.transfers.setQueued(t.id, next, resend, now);
        return true;
      });
      if (!active) return;
      t = this.#ctx.store.transfers.get("out", t.id)!;
    }
  }

  async #renderPart(
    t: TransferRecord,
    index: number,
    to: readonly string[],
  ): Promise<RenderedMail | undefined> {
    if (index >= t.parts) return undefined;
    const recipients = to.map((a) => this.#keyed(a)).filter((r) => r !== undefined);
    if (recipients.length === 0) return undefined;
    const offset = index * t.partSize;
    const body = await readAt(blobPath(this.#ctx.blobDir, t.blob), offset, partLength(t, index));
    // The mail's own Message-ID says nothing; the outbox row's names the transfer (the window).
    const messageId = this.deps.sealer.newMessageId();
    const inner = renderTransferMail({
      from: this.deps.selfAddr,
      to: recipients.map((r) => r.addr),
      messageId,
      date: new Date(this.#ctx.now()),
      header: [
        Header.EDGE_TRANSFER_PART,
        formatPart({ id: t.id, index, offset, length: body.byteLength, sha256: sha256Hex(body) }),
      ],
      body,
    });
    const mail = await this.deps.sealer.seal(inner, recipients, messageId);
    return { ...mail, rfc724Mid: `${partPrefix(t.id)}${index}-${messageId}` };
  }

  #keyed(addr: string): KeyedRecipient | undefined {
    const c = this.#ctx.store.contacts.keyContactsByAddr(addr)[0];
    return c && { addr: c.addr, publicKey: c.publicKey };
  }

  #progressOut(t: TransferRecord, queued: number): void {
    const sent = t.nextPart >= t.parts && queued === 0
      ? t.size
      : Math.min(t.size, Math.max(0, t.nextPart - queued) * t.partSize);
    if (!this.#throttle.due(`out:${t.id}`, sent, t.size)) return;
    this.#ctx.tx.emit({
      kind: "TransferProgress",
      ...this.#fields(t, sent),
    });
  }

  #fields(t: TransferRecord, bytes: number) {
    return {
      chatId: t.chatId,
      msgId: t.msgId > 0 ? t.msgId : null,
      transferId: t.id,
      direction: t.direction,
      bytes,
      total: t.size,
      path: "relay" as const,
    };
  }

  #finishOut(t: TransferRecord, state: "done" | "failed" | "cancelled", reason: string): void {
    this.#ctx.tx.run((emit) => {
      if (!this.#ctx.store.transfers.finish("out", t.id, "", state, reason, this.#ctx.now())) {
        return;
      }
      this.#ctx.store.outbox.removeByMidPrefix(partPrefix(t.id));
      if (state === "done") emit({ kind: "TransferDone", ...this.#fields(t, t.size) });
      else {
        emit({ kind: "TransferFailed", reason, ...this.#fields(t, 0) });
        if (this.#ctx.store.msgs.get(t.msgId) !== undefined) {
          this.#states.markFailed(t.msgId, `file transfer ${state}: ${reason}`);
        }
      }
    });
    this.#throttle.forget(`out:${t.id}`);
    log.info("outgoing transfer ended", { transferId: t.id, state, reason });
  }

  /**
   * Cancels the outgoing transfer of message `msgId`: queued parts are dropped, recipients told;
   * false when it has none still running.
   */
  async cancel(msgId: number): Promise<boolean> {
    const t = this.#ctx.store.transfers.byMessage(msgId);
    if (t === undefined || t.direction !== "out" || t.state !== "active") return false;
    this.#finishOut(t, "cancelled", "cancelled");
    await this.#sendControl(t.pending, { id: t.id, action: "refused", reason: "cancelled" });
    return true;
  }

  /** The transfer of message `msgId`, or undefined. */
  view(msgId: number): TransferView | undefined {
    const t = this.#ctx.store.transfers.byMessage(msgId);
    if (t === undefined) return undefined;
    const partsDone = t.direction === "in"
      ? (t.state === "done" ? t.parts : countBits(t.have, t.parts))
      : t.state === "done"
      ? t.parts
      : Math.max(0, t.nextPart - this.#ctx.store.outbox.countByMidPrefix(partPrefix(t.id)));
    return {
      transferId: t.id,
      direction: t.direction,
      state: t.state,
      reason: t.reason,
      bytes: Math.min(t.size, partsDone * t.partSize),
      total: t.size,
      parts: t.parts,
      partsDone,
      path: "relay",
      pending: t.state === "active" ? t.pending : [],
    };
  }

  /** Whether `addr` has not confirmed (or failed) message `msgId`'s file (not yet received). */
  undelivered(msgId: number, addr: string): boolean {
    const t = this.#ctx.store.transfers.byMessage(msgId);
    if (t === undefined || t.direction !== "out") return false;
    return t.state !== "done" && (t.state !== "active" || t.pending.includes(addr));
  }

  // ---- receive side ----

  /**
   * Handles a transfer mail from a verified signer: an announcing chat message (held until the
   * file is complete), a part, or a control mail; undefined when `mail` is none of them.
   */
  async receive(
    mail: ReadMail,
    raw: Uint8Array,
  ): Promise<
    { kind: "transfer"; what: string } | { kind: "rejected"; reason: string } | undefined
  > {
    const signer = mail.signer!;
    const partHeader = mail.headers.get(Header.EDGE_TRANSFER_PART);
    if (partHeader !== undefined) return await this.#onPart(mail, signer, partHeader);
    const controlHeader = mail.headers.get(Header.EDGE_TRANSFER_CONTROL);
    if (controlHeader !== undefined) return await this.#onControl(mail, signer, controlHeader);
    const announceHeader = mail.headers.get(Header.EDGE_TRANSFER);
    if (announceHeader !== undefined) {
      return await this.#onAnnounce(signer, announceHeader, raw, this.#knownChat(mail, signer));
    }
    return undefined;
  }

  /** The chat the announced message will go to when it exists already (events), else 0. */
  #knownChat(mail: ReadMail, signer: string): number {
    const a = assignChat(mail);
    if (a.kind === "group") return this.#ctx.store.chats.byGrpid(a.grpid)?.id ?? 0;
    if (a.kind !== "single") return 0;
    const contact = this.#ctx.store.contacts.byFingerprint(signer);
    return (contact && this.#ctx.store.chats.singleByContact(contact.id)?.id) ?? 0;
  }

  async #onAnnounce(signer: string, header: string, raw: Uint8Array, chatId: number) {
    const a = parseAnnounce(header);
    if (a === undefined) return { kind: "rejected" as const, reason: "unreadable Edge-Transfer" };
    const contact = this.#ctx.store.contacts.byFingerprint(signer);
    if (contact === undefined) {
      return { kind: "rejected" as const, reason: "a transfer from an unknown key" };
    }
    if (this.#ctx.store.transfers.get("in", a.id, signer) !== undefined) {
      return { kind: "transfer" as const, what: "announce seen before" };
    }
    const refusal = this.#refusal(a.size, a.parts);
    const now = this.#ctx.now();
    const name = partialName(a.id, signer);
    const bitmap = new Uint8Array(Math.ceil(a.parts / 8));
    if (refusal !== undefined) {
      this.#ctx.tx.run((emit) => {
        this.#ctx.store.transfers.insert({
          ...a,
          direction: "in",
          peerFingerprint: signer,
          chatId,
          now,
        });
        this.#ctx.store.transfers.finish("in", a.id, signer, "failed", refusal, now);
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
      await this.#sendControl([contact.addr], { id: a.id, action: "refused", reason: refusal });
      return { kind: "transfer" as const, what: `refused: ${refusal}` };
    }
    this.#ctx.store.transfers.insert({
      ...a,
      direction: "in",
      peerFingerprint: signer,
      blob: name,
      have: bitmap,
      announce: raw,
      chatId,
      now,
    });
    log.info("incoming transfer accepted", { transferId: a.id, bytes: a.size, parts: a.parts });
    return { kind: "transfer" as const, what: "announce" };
  }

  /** Why a file of `size` bytes cannot be taken, or undefined. */
  #refusal(size: number, parts: number): string | undefined {
    if (size > this.#o.maxFileBytes || parts > 1_000_000) return "too_large";
    const free = freeBytes(this.#ctx.blobDir);
    if (free !== undefined && free < size + this.#o.diskReserveBytes) return "no_space";
    return undefined;
  }

  async #onPart(mail: ReadMail, signer: string, header: string) {
    const p = parsePart(header);
    if (p === undefined) {
      return { kind: "rejected" as const, reason: "unreadable Edge-Transfer-Part" };
    }
    const t = this.#ctx.store.transfers.get("in", p.id, signer);
    if (t === undefined) return { kind: "transfer" as const, what: "part of an unknown transfer" };
    if (t.state !== "active" || bit(t.have, p.index)) {
      return { kind: "transfer" as const, what: "part seen before" };
    }
    const body = mail.content.body;
    const want = partLength(t, p.index);
    if (
      p.index >= t.parts || p.offset !== p.index * t.partSize || p.length !== want ||
      body.byteLength !== want
    ) {
      return {
        kind: "rejected" as const,
        reason: `transfer ${t.id}: part ${p.index} out of place`,
      };
    }
    if (sha256Hex(body) !== p.sha256) {
      return {
        kind: "rejected" as const,
        reason: `transfer ${t.id}: part ${p.index} has a wrong hash`,
      };
    }
    // The disk may have filled since the transfer was accepted: give up cleanly, sender told.
    const free = freeBytes(this.#ctx.blobDir);
    if (free !== undefined && free < body.byteLength + this.#o.diskReserveBytes / 4) {
      await this.#failIn(t, "no_space");
      return { kind: "transfer" as const, what: "refused: no_space" };
    }
    await Deno.mkdir(this.#ctx.blobDir, { recursive: true });
    await writeAt(partialPath(this.#ctx.blobDir, t.blob), p.offset, body);
    const have = t.have.slice();
    have[p.index >> 3] |= 1 << (p.index & 7);
    const done = countBits(have, t.parts);
    this.#ctx.tx.run((emit) => {
      this.#ctx.store.transfers.setHave(t.id, signer, have, this.#ctx.now());
      const bytes = Math.min(t.size, done * t.partSize);
      if (this.#throttle.due(`in:${t.id}`, bytes, t.size)) {
        emit({ kind: "TransferProgress", ...this.#fields(t, bytes) });
      }
    });
    if (done === t.parts) await this.#complete(this.#ctx.store.transfers.get("in", t.id, signer)!);
    return { kind: "transfer" as const, what: `part ${p.index}` };
  }

  /** Verifies the whole file, shows the message once, confirms to the sender. */
  async #complete(t: TransferRecord): Promise<void> {
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
    const current = this.#ctx.store.transfers.get("in", t.id, t.peerFingerprint);
    if (current?.state !== "active") return;
    const partial = partialPath(this.#ctx.blobDir, t.blob);
    const final = blobName(t.sha256, t.name);
    const finalPath = blobPath(this.#ctx.blobDir, final);
    const hasPartial = await Deno.stat(partial).then(() => true, () => false);
    if (hasPartial) {
      const sha = await sha256File(partial);
      if (sha !== t.sha256) {
        await this.#failIn(t, "hash_mismatch");
        return;
      }
      await Deno.rename(partial, finalPath);
    } else if (!await Deno.stat(finalPath).then(() => true, () => false)) {
      await this.#failIn(t, "partial_lost");
      return;
    }
    const shown = await this.#show?.(t.announce, {
      blob: final,
      path: finalPath,
      name: t.name,
      mime: t.mime,
      bytes: t.size,
    });
    this.#ctx.tx.run((emit) => {
      if (
        !this.#ctx.store.transfers.finish(
          "in",
          t.id,
          t.peerFingerprint,
          "done",
          "",
          this.#ctx.now(),
          shown?.msgId,
        )
      ) return;
      emit({
        kind: "TransferDone",
        ...this.#fields({ ...t, chatId: shown?.chatId ?? 0, msgId: shown?.msgId ?? 0 }, t.size),
      });
    });
    this.#throttle.forget(`in:${t.id}`);
    const sender = this.#ctx.store.contacts.byFingerprint(t.peerFingerprint);
    if (sender) await this.#sendControl([sender.addr], { id: t.id, action: "done" });
    log.info("incoming transfer complete", { transferId: t.id, bytes: t.size });
  }

  async #failIn(t: TransferRecord, reason: string): Promise<void> {
    this.#ctx.tx.run((emit) => {
      if (
        !this.#ctx.store.transfers.finish(
          "in",
          t.id,
          t.peerFingerprint,
          "failed",
          reason,
          this.#ctx.now(),
        )
      ) return;
      emit({ kind: "TransferFailed", reason, ...this.#fields(t, 0) });
    });
    await Deno.remove(partialPath(this.#ctx.blobDir, t.blob)).catch(() => {});
    log.warn("incoming transfer failed", { transferId: t.id, reason });
    const sender = this.#ctx.store.contacts.byFingerprint(t.peerFingerprint);
    if (sender) await this.#sendControl([sender.addr], { id: t.id, action: "refused", reason });
  }

  async #onControl(_mail: ReadMail, signer: string, header: string) {
    const c = parseControl(header);
    if (c === undefined) {
      return { kind: "rejected" as const, reason: "unreadable Edge-Transfer-Control" };
    }
    // The asker is the contact of the signing key, whatever address the mail shows.
    const contact = this.#ctx.store.contacts.byFingerprint(signer);
    const addr = contact?.addr ?? "";
    const out = this.#ctx.store.transfers.get("out", c.id);
    if (out !== undefined && out.state === "active" && out.pending.includes(addr)) {
      this.#onOutControl(out, addr, c);
      void this.pump();
      return { kind: "transfer" as const, what: `${c.action} from ${addr}` };
    }
    const inc = this.#ctx.store.transfers.get("in", c.id, signer);
    if (inc !== undefined && inc.state === "active" && c.action === "refused") {
      await this.#failIn(inc, c.reason === "cancelled" ? "cancelled_by_sender" : c.reason);
      return { kind: "transfer" as const, what: "cancelled by the sender" };
    }
    return { kind: "transfer" as const, what: "control for no active transfer" };
  }

  #onOutControl(t: TransferRecord, addr: string, c: TransferControl): void {
    switch (c.action) {
      case TransferAction.REQUEST: {
        // Parts not sent yet go out on the first pass anyway.
        const parts = c.parts.filter((i) => i < Math.min(t.parts, t.nextPart));
        if (parts.length === 0) return;
        const resend: ResendRequest[] = [
          ...t.resend.filter((r) => r.addr !== addr),
          { addr, parts },
        ];
        this.#ctx.store.transfers.setResend(t.id, resend);
        log.info("parts asked for again", { transferId: t.id, parts: parts.length });
        return;
      }
      case TransferAction.DONE:
      case TransferAction.REFUSED: {
        // One member's refusal ends the transfer for that member only; the others go on.
        const refused = c.action === TransferAction.REFUSED;
        const why = refused ? `refused by ${addr}: ${c.reason}` : "";
        this.#ctx.tx.run((emit) => {
          this.#ctx.store.transfers.answered(t.id, addr, refused ? "refused" : "confirmed");
          if (refused) emit({ kind: "Warning", msg: `file transfer ${t.id}: ${why}` });
        });
        if (refused) log.warn("a recipient refused the file", { transferId: t.id, addr, why });
        const now = this.#ctx.store.transfers.get("out", t.id)!;
        if (now.pending.length > 0) return;
        // Done when anyone has the file; failed when every recipient refused it.
        if (now.confirmed.length > 0) this.#finishOut(now, "done", "");
        else this.#finishOut(now, "failed", why);
        return;
      }
    }
  }

  async #sendControl(to: readonly string[], c: TransferControl): Promise<void> {
    const recipients = to.map((a) => this.#keyed(a)).filter((r) => r !== undefined);
    if (recipients.length === 0) return;
    const messageId = this.deps.sealer.newMessageId();
    const inner = renderTransferMail({
      from: this.deps.selfAddr,
      to: recipients.map((r) => r.addr),
      messageId,
      date: new Date(this.#ctx.now()),
      header: [Header.EDGE_TRANSFER_CONTROL, formatControl(c)],
    });
    const mail = await this.deps.sealer.seal(inner, recipients, messageId);
    this.#ctx.tx.run(() => {
      this.#ctx.store.outbox.enqueue({ msgId: 0, ...mail });
      this.#ctx.tx.mailQueued();
    });
  }

  /**
   * The periodic work: finishes incoming transfers whose parts are all written (after a crash),
   * asks for missing parts after a quiet time, gives up stale ones, removes partial blobs no
   * transfer owns, and queues outgoing parts.
   */
  async sweep(): Promise<void> {
    const now = this.#ctx.now();
    const requestAfterMs = configuredRequestAfterMs(this.#ctx.store) ?? this.#o.requestAfterMs;
    for (const t of this.#ctx.store.transfers.active("in")) {
      if (countBits(t.have, t.parts) === t.parts) {
        await this.#complete(t);
        continue;
      }
      // After a restart the parts that came meanwhile are still in INBOX: wait for them first.
      if (now - Math.max(t.updatedAt, this.#startedAt) < requestAfterMs) continue;
      if (t.requests >= this.#o.maxRequests) {
        await this.#failIn(t, "expired");
        continue;
      }
      const missing: number[] = [];
      for (let i = 0; i < t.parts && missing.length < 4096; i++) {
        if (!bit(t.have, i)) missing.push(i);
      }
      const sender = this.#ctx.store.contacts.byFingerprint(t.peerFingerprint);
      if (sender === undefined) continue;
      this.#ctx.store.transfers.noteRequest(t.id, t.peerFingerprint, now);
      await this.#sendControl([sender.addr], { id: t.id, action: "request", parts: missing });
      log.info("missing parts asked for", { transferId: t.id, parts: missing.length });
    }
    if (now - this.#orphansCheckedAt >= ORPHAN_CHECK_MS) {
      this.#orphansCheckedAt = now;
      await this.#removeOrphans();
    }
    await this.pump();
  }

  async #removeOrphans(): Promise<void> {
    const keep = this.#ctx.store.transfers.activePartials();
    try {
      for await (const e of Deno.readDir(this.#ctx.blobDir)) {
        if (!e.isFile || !e.name.startsWith(PARTIAL_PREFIX) || keep.has(e.name)) continue;
        await Deno.remove(partialPath(this.#ctx.blobDir, e.name)).catch(() => {});
        log.info("partial blob of an ended transfer removed", { name: e.name });
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
}
