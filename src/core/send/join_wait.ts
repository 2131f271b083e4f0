/**
 * Messages that wait for a SecureJoin handshake: sent to a contact whose join is in progress and
 * whose key is not known yet, they stay pending (10, not rendered) until the join completes, then
 * go out in order; they fail (24, MsgFailed) when the join does not complete in time.
 */
import { blobPath } from "../blobs.ts";
import { Chats } from "../chats/chats.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import { MessageStates } from "../chats/message_states.ts";
import type { ChatRecord, ContactRecord, JoinerRecord, MessageRecord } from "../../store/mod.ts";
import type { Viewtype } from "../../protocol.ts";
import type { OutgoingDraft, RenderedMail, SendSteps } from "./rendered_mail.ts";
import { GatewayError } from "../../errors.ts";

/** How long a message waits for a join to complete, from the join's start. */
export const JOIN_WAIT_MS = 10 * 60_000;

/** How the waiting messages of a chat stand. */
type Verdict =
  | { readonly kind: "wait" }
  | { readonly kind: "send" }
  | { readonly kind: "fail"; readonly reason: string };

/** Holding, releasing and failing the messages that wait for a join. */
export class JoinWait {
  readonly #chats: Chats;

  constructor(private readonly ctx: CoreContext) {
    this.#chats = new Chats(ctx);
  }

  /** The newest join with `contactId`, when one is still in progress and not timed out. */
  #liveJoin(contactId: number): JoinerRecord | undefined {
    const joiner = this.ctx.store.securejoin.joinersForContact(contactId)[0];
    if (joiner === undefined) return undefined;
    return nowSeconds(this.ctx) * 1000 < joiner.createdAt * 1000 + JOIN_WAIT_MS
      ? joiner
      : undefined;
  }

  /**
   * Whether a new message to `chat` must wait: a recipient without a key has a join in progress,
   * or earlier messages of the chat still wait (order is kept).
   */
  mustWait(chat: ChatRecord, recipients: readonly ContactRecord[]): boolean {
    const joining = recipients.some((c) => this.#liveJoin(c.id) !== undefined);
    if (!joining) return false;
    const keyless = recipients.some((c) => c.fingerprint === "" || c.publicKey.length === 0);
    return keyless || this.ctx.store.msgs.waitingForJoin(chat.id).length > 0;
  }

  /** Whether any recipient of `chat` has a join record (in progress or timed out). */
  joinedOrJoining(recipients: readonly ContactRecord[]): boolean {
    return recipients.some((c) => this.ctx.store.securejoin.joinersForContact(c.id).length > 0);
  }

  #verdict(chat: ChatRecord): Verdict {
    const recipients = this.#chats.recipients(chat);
    if (recipients.some((c) => this.#liveJoin(c.id) !== undefined)) return { kind: "wait" };
    const timedOut = recipients.find((c) =>
      this.ctx.store.securejoin.joinersForContact(c.id).length > 0
    );
    if (timedOut !== undefined) {
      return {
        kind: "fail",
        reason: `the SecureJoin handshake with ${timedOut.addr} did not complete within ` +
          `${JOIN_WAIT_MS / 60_000} minutes; the message was not sent`,
      };
    }
    const keyless = recipients.find((c) => c.fingerprint === "" || c.publicKey.length === 0);
    if (recipients.length === 0 || keyless !== undefined) {
      const who = keyless?.addr ?? "the chat";
      return {
        kind: "fail",
        reason: `${who} has no encryption key and no SecureJoin handshake is in progress; ` +
          "the message was not sent",
      };
    }
    return { kind: "send" };
  }

  /**
   * Settles the waiting messages of chat `chatId`: admits, renders and queues them in order (one
   * transaction each: Message-ID + outbox rows (the mail and its separate mails), `MsgsChanged`
   * and what the mail announces) once the join completed, fails them (24, `MsgFailed` with the reason) once
   * it timed out, else leaves them. A message the send steps refuse now (a license that lapsed
   * meanwhile) fails with their reason. Returns the ids queued.
   */
  async settle(chatId: number, steps: SendSteps): Promise<number[]> {
    const waiting = this.ctx.store.msgs.waitingForJoin(chatId);
    if (waiting.length === 0) return [];
    const chat = this.ctx.store.chats.get(chatId);
    if (chat === undefined) return [];
    const verdict = this.#verdict(chat);
    if (verdict.kind === "wait") return [];
    if (verdict.kind === "fail") {
      const states = new MessageStates(this.ctx);
      for (const m of waiting) states.markFailed(m.id, verdict.reason);
      return [];
    }
    const recipients = this.#chats.recipients(chat);
    const queued: number[] = [];
    for (const m of waiting) {
      const draft = this.#draftOf(m);
      let mail: RenderedMail;
      try {
        await steps.admit(draft, chat, recipients);
        mail = await steps.render(draft, chat, recipients);
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        new MessageStates(this.ctx).markFailed(m.id, err.message);
        continue;
      }
      const done = this.ctx.tx.run((emit) => {
        if (!this.ctx.store.msgs.setRendered(m.id, mail.rfc724Mid, mail.subject ?? "")) {
          return false;
        }
        this.ctx.store.outbox.enqueue({ msgId: m.id, ...mail });
        for (const separate of mail.separateMails ?? []) {
          this.ctx.store.outbox.enqueue({ msgId: 0, ...separate });
        }
        this.ctx.tx.mailQueued();
        mail.record?.(m.id);
        emit({ kind: "MsgsChanged", chatId, msgId: m.id });
        for (const e of mail.announce?.(m.id) ?? []) emit(e);
        return true;
      });
      if (!done) continue;
      queued.push(m.id);
    }
    return queued;
  }

  /**
   * Settles chats with waiting messages: every one (`all`, at start: one scan of the messages),
   * else the chats of join records (periodically: joins that time out). Returns the ids queued.
   */
  async settleAll(steps: SendSteps, all = false): Promise<number[]> {
    const chats = new Set(
      all
        ? this.ctx.store.msgs.waitingForJoin().map((m) => m.chatId)
        : this.ctx.store.securejoin.joiners().map((j) => j.chatId),
    );
    const queued: number[] = [];
    for (const chatId of chats) queued.push(...await this.settle(chatId, steps));
    return queued;
  }

  /** The draft a waiting message was stored from. */
  #draftOf(m: MessageRecord): OutgoingDraft {
    return {
      chatId: m.chatId,
      text: m.text,
      viewtype: m.viewtype as Viewtype,
      timestamp: m.timestamp,
      file: m.file === "" ? undefined : {
        blob: m.file,
        path: blobPath(this.ctx.blobDir, m.file),
        name: m.fileName,
        mime: m.fileMime,
        bytes: m.fileBytes,
      },
      inReplyTo: m.inReplyTo,
      quote: m.quote,
    };
  }
}
