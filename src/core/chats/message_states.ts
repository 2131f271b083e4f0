/**
 * Delivery states of messages, forward-only (docs/contract.md §3.1 numbering): outgoing 10 pending
 * → 20 accepted by the relay → 26 on the peer's device → 28 read, or 24 failed; incoming 1 fresh →
 * 16 seen. Every transition emits its event after the commit, and only when the state really moved.
 */
import { ContactId, MessageState } from "../../constants.ts";
import type { MessageRecord } from "../../store/mod.ts";
import type { CoreContext, Emit } from "../context.ts";

const S = MessageState;
/** States each outgoing transition may start from; anything else means "already further". */
const FROM = {
  [S.DELIVERED_TO_SERVER]: [S.PENDING],
  [S.DELIVERED_TO_DEVICE]: [S.PENDING, S.DELIVERED_TO_SERVER],
  [S.READ]: [S.PENDING, S.DELIVERED_TO_SERVER, S.DELIVERED_TO_DEVICE],
  [S.FAILED]: [S.PENDING, S.DELIVERED_TO_SERVER],
} as const;

/** Outgoing delivery, failures, read receipts and marking incoming messages seen. */
export class MessageStates {
  constructor(private readonly ctx: CoreContext) {}

  #move(emit: Emit, msgId: number, to: keyof typeof FROM, kind: "MsgDelivered" | "MsgRead") {
    const m = this.ctx.store.msgs.get(msgId);
    if (m === undefined || m.fromId !== ContactId.SELF) return false;
    if (!this.ctx.store.msgs.moveState(msgId, to, FROM[to])) return false;
    emit({ kind, chatId: m.chatId, msgId });
    return true;
  }

  /**
   * The relay accepted outbox row `outboxId`: removes it, and when it was the message's last
   * queued mail moves the message 10 → 20 with `MsgDelivered{chatId,msgId}`. Returns the
   * message id (0 for mails without one), or undefined for an unknown row.
   */
  outboxSent(outboxId: number): number | undefined {
    const spools: string[] = [];
    const msgId = this.ctx.tx.run((emit) => {
      const row = this.ctx.store.outbox.get(outboxId);
      if (row === undefined) return undefined;
      if (row.spool !== "") spools.push(row.spool);
      this.ctx.store.outbox.remove(outboxId);
      if (row.msgId !== 0 && this.ctx.store.outbox.countForMessage(row.msgId) === 0) {
        this.#move(emit, row.msgId, S.DELIVERED_TO_SERVER, "MsgDelivered");
      }
      return row.msgId;
    });
    this.#dropSpools(spools);
    return msgId;
  }

  /** Removes spool files no row names any more (after the commit; a failure waits for start). */
  #dropSpools(names: readonly string[]): void {
    for (const name of names) void this.ctx.spool.remove(name).catch(() => {});
  }

  /**
   * Sending outbox row `outboxId` failed for good: removes the row and its message's other
   * queued mails, and fails the message (see `markFailed`). Returns the message id or undefined.
   */
  outboxGaveUp(outboxId: number, error: string): number | undefined {
    const spools: string[] = [];
    const msgId = this.ctx.tx.run(() => {
      const row = this.ctx.store.outbox.get(outboxId);
      if (row === undefined) return undefined;
      if (row.spool !== "") spools.push(row.spool);
      this.ctx.store.outbox.remove(outboxId);
      if (row.msgId !== 0) {
        spools.push(...this.ctx.store.outbox.spools(row.msgId));
        this.ctx.store.outbox.removeForMessage(row.msgId);
        this.markFailed(row.msgId, error);
      }
      return row.msgId;
    });
    this.#dropSpools(spools);
    return msgId;
  }

  /** 10|20 → 24 with the error text and `MsgFailed{chatId,msgId}`; returns true if it moved. */
  markFailed(msgId: number, error: string): boolean {
    return this.ctx.tx.run((emit) => {
      const m = this.ctx.store.msgs.get(msgId);
      if (m === undefined || m.fromId !== ContactId.SELF) return false;
      if (!this.ctx.store.msgs.moveState(msgId, S.FAILED, FROM[S.FAILED])) return false;
      this.ctx.store.msgs.setError(msgId, error);
      emit({ kind: "MsgFailed", chatId: m.chatId, msgId });
      return true;
    });
  }

  /**
   * A peer's device reported our message stored (gateway delivery receipt): 10|20 → 26 with
   * `MsgDelivered{chatId,msgId}`. Returns true if it moved.
   */
  markDeliveredToDevice(msgId: number): boolean {
    return this.ctx.tx.run((emit) =>
      this.#move(emit, msgId, S.DELIVERED_TO_DEVICE, "MsgDelivered")
    );
  }

  /**
   * A read receipt (MDN) from `contactId` for our message: records it, and on the first one
   * moves 10|20|26 → 28 with `MsgRead{chatId,msgId}`. Ignored for messages we did not send.
   * Returns true when the receipt was new.
   */
  markReadBy(msgId: number, contactId: number, timestamp: number): boolean {
    return this.ctx.tx.run((emit) => {
      const m = this.ctx.store.msgs.get(msgId);
      if (m === undefined || m.fromId !== ContactId.SELF) return false;
      const added = this.ctx.store.receipts.add(msgId, contactId, timestamp);
      this.#move(emit, msgId, S.READ, "MsgRead");
      return added;
    });
  }

  /**
   * Marks incoming messages seen: fresh (1) → 16; other ids (unknown, outgoing, already seen)
   * are skipped. Emits `MsgsNoticed{chatId}` once per chat that changed. Returns the messages
   * that moved and asked for a read receipt (visible, `mdnRequested`): send those an MDN.
   */
  markSeen(ids: readonly number[]): MessageRecord[] {
    return this.ctx.tx.run((emit) => {
      const chats = new Set<number>();
      const receipts: MessageRecord[] = [];
      for (const id of new Set(ids)) {
        const m = this.ctx.store.msgs.get(id);
        if (m === undefined || m.fromId === ContactId.SELF) continue;
        if (!this.ctx.store.msgs.moveState(id, S.SEEN, [S.FRESH])) continue;
        chats.add(m.chatId);
        if (m.mdnRequested && !m.hidden) receipts.push({ ...m, state: S.SEEN });
      }
      for (const chatId of chats) emit({ kind: "MsgsNoticed", chatId });
      return receipts;
    });
  }
}
