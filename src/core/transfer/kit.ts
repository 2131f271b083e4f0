/**
 * What both sides of a transfer share: the context with the options, the progress throttle,
 * recipients' keys by address, the fields of every transfer event, the hidden control mails, and
 * the arithmetic of parts and bitmaps.
 */
import { Header } from "../../protocol.ts";
import type { TransferPath, TransferRecord } from "../../store/mod.ts";
import type { CoreContext } from "../context.ts";
import type { KeyedRecipient } from "../send/mail_composer.ts";
import { formatControl, type TransferControl } from "./headers.ts";
import { DEFAULT_TRANSFER_OPTIONS, type TransferDeps, type TransferOptions } from "./options.ts";
import { renderTransferMail } from "./part_mail.ts";
import { ProgressThrottle } from "./progress.ts";

/** Whether bit `i` (part `i` verified) is set. */
export function bit(have: Uint8Array, i: number): boolean {
  return ((have[i >> 3] ?? 0) & (1 << (i & 7))) !== 0;
}

/** How many of `parts` bits are set. */
export function countBits(have: Uint8Array, parts: number): number {
  let n = 0;
  for (let i = 0; i < parts; i++) if (bit(have, i)) n++;
  return n;
}

/** The length of part `index` of a transfer. */
export function partLength(t: { size: number; partSize: number }, index: number): number {
  return Math.max(0, Math.min(t.partSize, t.size - index * t.partSize));
}

/** The prefix of a transfer's part rows in the outbox (never on the wire). */
export function partPrefix(id: string): string {
  return `t-${id}-`;
}

/** The shared tools of one account's transfers. */
export class TransferKit {
  readonly ctx: CoreContext;
  readonly o: TransferOptions;
  readonly throttle: ProgressThrottle;
  /**
   * Transfers the direct path carries now, as `out:<id>` / `in:<id>` (runs of this process; what
   * events report is the row's `path`, which outlives a restart).
   */
  readonly onDirect = new Set<string>();

  constructor(readonly deps: TransferDeps) {
    this.ctx = deps.ctx;
    this.o = { ...DEFAULT_TRANSFER_OPTIONS, ...deps.options };
    this.throttle = new ProgressThrottle(() => deps.ctx.now());
  }

  /** The key-contact of `addr` as a mail recipient (verified first), or undefined. */
  keyed(addr: string): KeyedRecipient | undefined {
    const c = this.ctx.store.contacts.keyContactsByAddr(addr)[0];
    return c && { addr: c.addr, publicKey: c.publicKey };
  }

  /** The members every transfer event carries. */
  fields(t: TransferRecord, bytes: number) {
    return {
      chatId: t.chatId,
      msgId: t.msgId > 0 ? t.msgId : null,
      transferId: t.id,
      direction: t.direction,
      bytes,
      total: t.size,
      path: this.pathOf(t),
    };
  }

  /** The path that carries transfer `t`, or last carried it, as its row says now. */
  pathOf(t: TransferRecord): TransferPath {
    return this.ctx.store.transfers.get(t.direction, t.id, t.peerFingerprint)?.path ?? t.path;
  }

  /** Records that `path` carries transfer `t` from now on. */
  setPath(t: Pick<TransferRecord, "direction" | "id" | "peerFingerprint">, path: TransferPath) {
    this.ctx.store.transfers.setPath(t.direction, t.id, t.peerFingerprint, path);
  }

  /** Queues a hidden control mail to `to` (request, done, refused). */
  sendControl(to: readonly string[], c: TransferControl): Promise<void> {
    return this.sendHidden(to, [Header.EDGE_TRANSFER_CONTROL, formatControl(c)]);
  }

  /** Queues a hidden transfer mail to `to` with its one transfer header and an optional body. */
  async sendHidden(
    to: readonly string[],
    header: readonly [string, string],
    body?: Uint8Array,
  ): Promise<void> {
    const recipients = to.map((a) => this.keyed(a)).filter((r) => r !== undefined);
    if (recipients.length === 0) return;
    const messageId = this.deps.sealer.newMessageId();
    const inner = renderTransferMail({
      from: this.deps.selfAddr,
      to: recipients.map((r) => r.addr),
      messageId,
      date: new Date(this.ctx.now()),
      header,
      ...(body === undefined ? {} : { body }),
    });
    const mail = await this.deps.sealer.seal(inner, recipients, messageId);
    this.ctx.tx.run(() => {
      this.ctx.store.outbox.enqueue({ msgId: 0, ...mail });
      this.ctx.tx.mailQueued();
    });
  }
}
