/**
 * Messages: reading chats' messages, sending (blob copy, render, then message + outbox row in one
 * transaction), storing received ones (dedup by Message-ID, pre/post-message merge) and deleting.
 * Delivery states and receipts are in `message_states.ts`.
 */
import { ChatType, ContactId, MessageState } from "../../constants.ts";
import { GatewayError, NotFoundError } from "../../errors.ts";
import type { ChatRecord, ContactRecord, MessageRecord, ReactionRecord } from "../../store/mod.ts";
import { blobPath, importFile, mimeOf, removeBlob } from "../blobs.ts";
import type { AttachableFile } from "../file_access.ts";
import { JoinWait } from "../send/join_wait.ts";
import { Chats } from "./chats.ts";
import { type ContactDetails, Contacts } from "../contacts/contacts.ts";
import { type CoreContext, nowSeconds } from "../context.ts";
import {
  type IncomingMessage,
  storeIncoming,
  type StoreIncomingResult,
} from "../receive/incoming.ts";
import type { OutgoingDraft, RenderedMail, SendSteps } from "../send/rendered_mail.ts";
import { type SystemMessage, Viewtype } from "../../protocol.ts";
import { type ChannelChange, channelPlan } from "../channels/mail.ts";
import type { GroupChange } from "../groups/mail.ts";
import { GroupMembers } from "../groups/members.ts";

export type { IncomingMessage, StoreIncomingResult } from "../receive/incoming.ts";

export { DownloadState, Viewtype } from "../../protocol.ts";
export type { OutgoingDraft, RenderedMail, RenderFn, SendSteps } from "../send/rendered_mail.ts";

/** The id `get_message_ids` puts before each new day when asked for day markers. */
export const DAY_MARKER_ID = 9;

/** What to send. */
export interface OutgoingMessage {
  readonly chatId: number;
  readonly text?: string;
  /**
   * A file that passed the file rules (`openAttachableFile`), already open; its content is
   * copied into the blob directory (the caller closes it). `name` defaults to its base name.
   */
  readonly file?: {
    readonly source: AttachableFile;
    readonly name?: string | undefined;
    readonly mime?: string;
  } | undefined;
  /** Default: File with a file, else Text. */
  readonly viewtype?: Viewtype;
  /** A message to quote (any chat's, not hidden): the reply shows its text above ours. */
  readonly quotedMessageId?: number | undefined;
  /** A group system message: the change it announces (`text` is the mail's fallback body). */
  readonly groupChange?: GroupChange;
  /** A channel system mail to one contact (`to`): a member-added, or our leave. */
  readonly channelChange?: ChannelChange & { readonly to: number };
  /** Stored as an info message with this text and Delta Chat system-message kind. */
  readonly info?: { readonly text: string; readonly systemType: SystemMessage };
}

/** What a quote of `m` shows: its text, else its file name, else its viewtype. */
export function quoteTextOf(m: MessageRecord): string {
  return m.text || m.fileName || m.viewtype;
}

/** A message with what the wire needs besides the row. */
export interface MessageDetails {
  readonly message: MessageRecord;
  /** Absolute blob path, or null without a file. */
  readonly file: string | null;
  /** The sender; a placeholder when the contact is gone. */
  readonly sender: ContactDetails;
  /** The message this one replies to, when stored. */
  readonly parentId: number | null;
  /** That message with its sender and blob path, for the quote (when stored). */
  readonly parent?: {
    readonly message: MessageRecord;
    readonly sender: ContactDetails;
    readonly file: string | null;
  };
  /** Each contact's reaction on it, oldest first. */
  readonly reactions: readonly ReactionRecord[];
}

/** Options of `idsOfChat`. */
export interface ChatMessageIdsOptions {
  /** Only info messages. */
  readonly infoOnly?: boolean;
  /** Put `DAY_MARKER_ID` (9) before the first message of each UTC day. */
  readonly dayMarkers?: boolean;
}

function unknownSender(id: number): ContactDetails {
  return {
    id,
    addr: "",
    authName: "",
    name: "",
    displayName: `Unknown contact ${id}`,
    fingerprint: "",
    verified: false,
    verifierId: 0,
    lastSeen: 0,
  };
}

/** Message reading, sending, reception storage and deletion. */
export class Messages {
  readonly #chats: Chats;
  readonly #contacts: Contacts;

  constructor(private readonly ctx: CoreContext) {
    this.#chats = new Chats(ctx);
    this.#contacts = new Contacts(ctx);
  }

  /** A message (id ≥ 10), or undefined. */
  get(id: number): MessageRecord | undefined {
    return id > DAY_MARKER_ID ? this.ctx.store.msgs.get(id) : undefined;
  }

  /** The id of the message with this Message-ID (angle brackets allowed), or undefined. */
  idByRfc724Mid(mid: string): number | undefined {
    return this.ctx.store.msgs.byRfc724Mid(mid.replace(/^<|>$/g, ""))?.id;
  }

  /** A message with its sender, blob path and parent, or undefined. */
  details(id: number): MessageDetails | undefined {
    const message = this.get(id);
    if (message === undefined) return undefined;
    const parent = message.inReplyTo === ""
      ? undefined
      : this.ctx.store.msgs.byRfc724Mid(message.inReplyTo);
    return {
      message,
      file: message.file === "" ? null : blobPath(this.ctx.blobDir, message.file),
      sender: this.#contacts.details(message.fromId) ?? unknownSender(message.fromId),
      parentId: parent?.id ?? null,
      ...(parent === undefined ? {} : {
        parent: {
          message: parent,
          sender: this.#contacts.details(parent.fromId) ?? unknownSender(parent.fromId),
          file: parent.file === "" ? null : blobPath(this.ctx.blobDir, parent.file),
        },
      }),
      reactions: this.ctx.store.reactions.forMessage(message.id),
    };
  }

  /** Visible message ids of a chat, oldest first (unknown chat → NotFoundError). */
  idsOfChat(chatId: number, o: ChatMessageIdsOptions = {}): number[] {
    const chat = this.#chats.require(chatId);
    const stamps = this.ctx.store.msgs.stampsOfChat(chat.id, o.infoOnly === true);
    if (o.dayMarkers !== true) return stamps.map((s) => s.id);
    const out: number[] = [];
    let day: number | undefined;
    for (const s of stamps) {
      const d = Math.floor(s.timestamp / 86_400);
      if (d !== day) out.push(DAY_MARKER_ID);
      day = d;
      out.push(s.id);
    }
    return out;
  }

  /** Ids of fresh incoming messages in all chats, newest first. */
  freshIds(): number[] {
    return this.ctx.store.msgs.freshIds();
  }

  /**
   * Sends a message, the one way every message of ours goes out: checks the chat and its
   * recipients (every one needs a key), copies the file into the blob directory, lets
   * `steps.admit` refuse it, renders it with `steps.render`, then inserts the message (state 10,
   * from 1) and its outbox rows (the mail and its `separateMails`) in one transaction and returns
   * the id. A message to a contact
   * whose SecureJoin handshake is in progress (no key yet) is admitted the same way, then stored
   * unrendered and goes out when the join completes, or fails when it times out
   * (`join_wait.ts`). Emits `MsgsChanged{chatId,msgId}` and what the mail announces after the
   * commit. When admitting, rendering or the transaction fails,
   * nothing is stored and a blob copied for this call alone is removed again.
   */
  async createOutgoing(m: OutgoingMessage, steps: SendSteps): Promise<number> {
    const chat = this.#chats.require(m.chatId);
    const group = chat.type === ChatType.GROUP
      ? await new GroupMembers(this.ctx).plan(chat, m.groupChange)
      : undefined;
    const channel = chat.type === ChatType.BROADCAST
      ? channelPlan(this.ctx, chat, m.channelChange)
      : undefined;
    const waits = chat.type === ChatType.SINGLE && await this.#joinWait(chat, steps);
    const recipients = group?.recipients ?? channel?.recipients ??
      (waits ? [] : this.sendRecipients(chat));
    const quoted = m.quotedMessageId === undefined ? undefined : this.#quotable(m.quotedMessageId);
    const base = {
      chatId: chat.id,
      text: m.text ?? "",
      viewtype: m.viewtype ?? (m.file ? Viewtype.FILE : Viewtype.TEXT),
      timestamp: nowSeconds(this.ctx),
      inReplyTo: quoted?.rfc724Mid ?? this.ctx.store.msgs.lastOfChat(chat.id)?.rfc724Mid ?? "",
      quote: quoted === undefined ? "" : quoteTextOf(quoted),
      ...(group === undefined ? {} : { group: group.mail }),
      ...(channel === undefined ? {} : { channel: channel.mail }),
    };
    if (m.file && steps.precheck) {
      // Before the file is copied: a file far too large is refused without touching the disk.
      const name = m.file.name ?? m.file.source.name;
      steps.precheck(
        {
          ...base,
          file: {
            blob: "",
            path: "",
            name,
            mime: m.file.mime ?? mimeOf(name),
            bytes: m.file.source.size,
          },
        },
        chat,
        waits ? this.#chats.recipients(chat) : recipients,
      );
    }
    const file = m.file &&
      await importFile(this.ctx.blobDir, m.file.source.chunks(), m.file.name ?? m.file.source.name);
    const blob = file && m.file?.mime ? { ...file, mime: m.file.mime } : file;
    if (blob) this.ctx.blobHolds.hold(blob.path);
    let msgId: number | undefined;
    let spooled: string | undefined;
    try {
      const draft: OutgoingDraft = { ...base, file: blob };
      await steps.admit(draft, chat, waits ? this.#chats.recipients(chat) : recipients);
      if (waits) {
        msgId = this.#insertOutgoing(draft, m.info);
        return msgId;
      }
      const mail = await steps.render(draft, chat, recipients);
      spooled = mail.spool;
      if (mail.rfc724Mid === "" || mail.recipients.length === 0) {
        throw new Error("the renderer returned a mail without Message-ID or recipients");
      }
      msgId = this.#insertOutgoing(draft, m.info, mail);
      return msgId;
    } finally {
      if (blob) this.ctx.blobHolds.release(blob.path);
      if (blob && msgId === undefined) await this.#dropUnusedBlob(blob.blob);
      // A mail rendered into the spool whose message was never stored is nobody's.
      if (spooled !== undefined && msgId === undefined) await this.ctx.spool.remove(spooled);
    }
  }

  /**
   * Whether a message to `chat` must wait for a SecureJoin handshake (`join_wait.ts`); earlier
   * waiting messages of the chat are settled first. Cheap when no recipient ever joined.
   */
  async #joinWait(chat: ChatRecord, steps: SendSteps): Promise<boolean> {
    const members = this.#chats.recipients(chat);
    const wait = new JoinWait(this.ctx);
    if (!wait.joinedOrJoining(members)) return false;
    await wait.settle(chat.id, steps);
    return wait.mustWait(chat, members);
  }

  /**
   * Who a mail to `chat` goes to: its members but self, each with a key; a clear -1 error for a
   * chat without members or with a member without a key (mail is always end-to-end encrypted).
   * A group: its members with a key (as Delta Chat); a channel: its subscribers.
   */
  sendRecipients(chat: ChatRecord): ContactRecord[] {
    if (chat.type === ChatType.GROUP) return new GroupMembers(this.ctx).recipientsOf(chat);
    if (chat.type === ChatType.BROADCAST) return channelPlan(this.ctx, chat).recipients;
    const recipients = this.#chats.recipients(chat);
    if (recipients.length === 0) {
      throw new GatewayError(`cannot send to chat ${chat.id}: it has no members besides you`);
    }
    const keyless = recipients.find((c) => c.fingerprint === "" || c.publicKey.length === 0);
    if (keyless !== undefined) {
      throw new GatewayError(
        `cannot send to chat ${chat.id}: ${keyless.addr} has no encryption key; messages are ` +
          `end-to-end encrypted, so set up the contact with an invite link first`,
      );
    }
    return recipients;
  }

  /** A message that can be quoted, or -1 saying why not. */
  #quotable(id: number): MessageRecord {
    const q = this.get(id);
    if (q === undefined) throw new NotFoundError(`cannot quote message ${id}: message not found`);
    if (q.hidden || q.rfc724Mid === "") {
      throw new GatewayError(`cannot quote message ${id}: it is not a chat message`);
    }
    return q;
  }

  /**
   * Inserts the message (state 10) and its outbox row; without `mail` it waits for a join. A
   * group mail marks the group announced and, when it gossiped, records the time.
   */
  #insertOutgoing(d: OutgoingDraft, info?: OutgoingMessage["info"], mail?: RenderedMail): number {
    return this.ctx.tx.run((emit) => {
      const msgId = this.ctx.store.msgs.insert({
        rfc724Mid: mail?.rfc724Mid ?? "",
        chatId: d.chatId,
        fromId: ContactId.SELF,
        text: info?.text ?? d.text,
        isInfo: info !== undefined,
        systemType: info?.systemType ?? "",
        timestamp: d.timestamp,
        state: MessageState.PENDING,
        subject: mail?.subject ?? "",
        timestampSent: d.timestamp,
        timestampRcvd: d.timestamp,
        quote: d.quote,
        viewtype: d.viewtype,
        file: d.file?.blob ?? "",
        fileName: d.file?.name ?? "",
        fileMime: d.file?.mime ?? "",
        fileBytes: d.file?.bytes ?? 0,
        inReplyTo: d.inReplyTo,
      });
      if (mail !== undefined) {
        this.ctx.store.outbox.enqueue({ msgId, ...mail });
        for (const separate of mail.separateMails ?? []) {
          this.ctx.store.outbox.enqueue({ msgId: 0, ...separate });
        }
        this.ctx.tx.mailQueued();
        mail.record?.(msgId);
      }
      for (const e of mail?.announce?.(msgId) ?? []) emit(e);
      if (d.group !== undefined) {
        this.ctx.store.chats.setPromoted(d.chatId);
        if (d.group.gossip) this.ctx.store.chats.setGossipedAt(d.chatId, d.timestamp);
      }
      emit({ kind: "MsgsChanged", chatId: d.chatId, msgId });
      return msgId;
    });
  }

  /**
   * Queues a mail that carries no chat message (read receipt, SecureJoin step); no event. The
   * sender is woken after the commit (see `DomainTx.mailQueued`).
   */
  enqueueMail(mail: RenderedMail): number {
    return this.ctx.tx.run(() => {
      const id = this.ctx.store.outbox.enqueue({ msgId: 0, ...mail });
      this.ctx.tx.mailQueued();
      return id;
    });
  }

  /**
   * Stores a received message (synchronous: call it inside the reception pipeline's
   * `ctx.tx.run`). See `incoming.ts` for dedup, the pre/post-message merge and its events.
   */
  storeIncoming(m: IncomingMessage): StoreIncomingResult {
    this.#chats.require(m.chatId);
    return storeIncoming(this.ctx, m);
  }

  /**
   * Deletes messages, their receipts and queued mails, then blob files no message uses any
   * more. Any unknown id → NotFoundError and nothing is deleted. Emits `MsgDeleted{chatId,msgId}`
   * per message after the commit.
   */
  async delete(ids: readonly number[]): Promise<void> {
    const found = ids.map((id) => {
      const m = this.get(id);
      if (m === undefined) throw new NotFoundError(`message ${id} not found`);
      return m;
    });
    const spools: string[] = [];
    this.ctx.tx.run((emit) => {
      for (const m of found) {
        if (!this.ctx.store.msgs.delete(m.id)) continue;
        spools.push(...this.ctx.store.outbox.spools(m.id));
        this.ctx.store.outbox.removeForMessage(m.id);
        emit({ kind: "MsgDeleted", chatId: m.chatId, msgId: m.id });
      }
    });
    for (const name of spools) await this.ctx.spool.remove(name);
    const files = new Set(found.map((m) => m.file).filter((f) => f !== ""));
    for (const file of files) await this.#dropUnusedBlob(file);
  }

  async #dropUnusedBlob(blob: string): Promise<void> {
    if (this.ctx.blobHolds.has(blobPath(this.ctx.blobDir, blob))) return;
    if (this.ctx.store.msgs.fileRefs(blob) === 0) await removeBlob(this.ctx.blobDir, blob);
  }
}
