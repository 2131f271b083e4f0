/**
 * The reception pipeline (ARCHITECTURE.md §3): raw mail → read (parse, decrypt, verify) →
 * SecureJoin step, receipt or chat message → chat assignment (chat_assignment.ts) → store in one
 * transaction (dedup by Message-ID) → events after the commit. Mail that can never be used (broken,
 * unsigned, signed by another key) is recorded with a reason and resolves, so the IMAP loop deletes
 * it; a failure that may pass or may be ours (a missing key, a signature we could not check, the
 * disk, the database) rejects and leaves the mail on the server, to be retried, then quarantined.
 */
import { ContactId } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import { logger } from "../../log.ts";
import {
  Capability,
  Header,
  isSecureJoinRequest,
  parseSecureJoinStep,
  SecureJoinStep,
} from "../../protocol.ts";
import { fingerprintOf, MAX_PLAINTEXT_BYTES } from "../../crypto/pgp.ts";
import { assignChat, type ChatAssignment } from "./assignment.ts";
import { Channels } from "../channels/channels.ts";
import type { PeerKey } from "../contacts/contacts.ts";
import { type GroupPrep, prepareGroup } from "../groups/headers.ts";
import { type ChatTarget, GroupReceiver } from "../groups/receive.ts";
import { chatContent, receiptContent, viewtypeOfMime } from "./content.ts";
import { chatControl } from "../chats/control.ts";
import { ChatControls } from "./controls.ts";
import { Chats } from "../chats/chats.ts";
import { adoptSpooled, writeBlob } from "../blobs.ts";
import { mailHead, mailSize, type MailSource, mailWhole } from "../../mime/mail_source.ts";
import { discardSpooled, readStreamedMail } from "./streamed_mail_reader.ts";
import { Contacts } from "../contacts/contacts.ts";
import type { CoreContext } from "../context.ts";
import { storeIncoming } from "./incoming.ts";
import type { BlobFile } from "../blobs.ts";
import {
  type MailReaderDeps,
  parseMailbox,
  parseMailboxList,
  type ReadMail,
  readMail,
  RetryableMailError,
  senderKey,
  sniffMessageId,
  stripAngles,
  UnreadableMailError,
  Unverified,
} from "./mail_reader.ts";
import { MessageStates } from "../chats/message_states.ts";

const log = logger("receive");

/** Bytes of a mail read from a file kept for its receive-error record (the Message-ID). */
const RECORDED_HEAD_BYTES = 256 * 1024;

/**
 * SecureJoin steps are handed to the SecureJoin code (securejoin/, which implements this port;
 * core does not import it).
 */
export interface SecureJoinReceiver {
  /** A plaintext `vc-request` or `vg-request` (the only plaintext mail accepted). */
  onRequest(mail: ReadMail, step: "vc-request" | "vg-request"): Promise<void>;
  /** An encrypted, signed step (`mail.signer` is set). */
  onStep(mail: ReadMail, step: SecureJoinStep): Promise<void>;
}

/** The sender of protected-file PDUs, as the protected-file code needs it. */
export interface PduSender {
  readonly fingerprint: string;
  /** Binary public key that signed the mail (and must have signed the PDUs). */
  readonly publicKey: Uint8Array;
}

/**
 * Protected-file PDUs are handed to the protected-file code (protected_files/), which lies above
 * core: a `.prv` with its PDUs is checked before the message's transaction and recorded inside
 * it; a hidden PDU mail (request, grant, revoke, deny) is handled on its own.
 */
export interface ProtectedFileReceiver {
  /** Verifies the PDUs that came with `file`; undefined when they do not describe it. */
  prepare(pdus: readonly string[], sender: PduSender, file: BlobFile): Promise<unknown>;
  /** Records a prepared file for message `msgId` (synchronous store work, in the transaction). */
  record(prepared: unknown, msgId: number, chatId: number, contactId: number): void;
  /** A mail of PDUs only, from contact `contactId`. */
  onPdus(pdus: readonly string[], sender: PduSender, contactId: number): Promise<void>;
  /**
   * A mail of PDUs only, from a key that is no contact (a forward's new recipient asking the
   * owner); `addContact` creates the contact from the mail's key when they are accepted.
   * True when any PDU was read.
   */
  onStrangerPdus(
    pdus: readonly string[],
    sender: PduSender,
    addContact: () => number,
  ): Promise<boolean>;
}

/**
 * Mails of a file sent as relay parts (core/transfer/, which implements this port): the chat
 * message announcing it is held until the file is complete, parts and control mails are hidden.
 */
export interface TransferReceiver {
  /**
   * Handles a transfer mail from a verified signer; undefined when `mail` is none. `whole` reads
   * the raw mail (an announcement is kept until its file is complete); a part's payload is the
   * mail's content (in memory, or spooled by the streamed reader).
   */
  receive(
    mail: ReadMail,
    whole: () => Promise<Uint8Array>,
  ): Promise<{ kind: "transfer"; what: string } | { kind: "rejected"; reason: string } | undefined>;
}

/** What the pipeline needs. */
export interface ReceiveDeps {
  readonly ctx: CoreContext;
  readonly reader: MailReaderDeps;
  /** Our own fingerprint (mail signed by it is our own and ignored). */
  readonly selfFingerprint: string;
  readonly secureJoin: SecureJoinReceiver;
  readonly protectedFiles: ProtectedFileReceiver;
  /**
   * A peer gateway asked for a delivery receipt of a message we just stored; called inside the
   * transaction that stores it (so it must be synchronous store work).
   */
  readonly deliveryReceiptWanted?: (contactId: number, rfc724Mid: string) => void;
  /** Files sent as relay parts (docs/transfer.md); none: such mails are stored as they are. */
  readonly transfers?: TransferReceiver;
}

/** What became of one mail. */
export type ReceiveOutcome =
  | {
    kind: "message";
    msgId: number;
    chatId: number;
    outcome: "created" | "duplicate" | "merged";
  }
  | { kind: "receipt"; changed: number }
  | { kind: "control"; action: "reaction" | "edit" | "delete"; changed: number }
  | { kind: "pdus"; count: number }
  | { kind: "securejoin"; step: SecureJoinStep }
  | { kind: "duplicate" }
  | { kind: "transfer"; what: string }
  | { kind: "ignored"; reason: string }
  | { kind: "rejected"; reason: string };

/** Runs the pipeline for one mail at a time (callers serialize; the IMAP loop does). */
export class Receiver {
  readonly #contacts: Contacts;
  readonly #chats: Chats;
  readonly #states: MessageStates;
  readonly #controls: ChatControls;
  readonly #groups: GroupReceiver;
  readonly #channels: Channels;

  constructor(private readonly deps: ReceiveDeps) {
    this.#controls = new ChatControls(deps.ctx);
    this.#contacts = new Contacts(deps.ctx);
    this.#chats = new Chats(deps.ctx);
    this.#states = new MessageStates(deps.ctx);
    this.#groups = new GroupReceiver(deps.ctx);
    this.#channels = new Channels(deps.ctx);
  }

  /**
   * Processes one raw mail; see the module doc for what rejects. Mail the domain refuses (an
   * address that is not one, say) is recorded like unreadable mail: retrying cannot fix it.
   */
  async receive(raw: Uint8Array): Promise<ReceiveOutcome> {
    let mail: ReadMail | undefined;
    try {
      mail = await readMail(raw, this.deps.reader);
      const outcome = await this.#process(raw, mail);
      this.#noteCapabilities(mail);
      return outcome;
    } catch (err) {
      if (err instanceof UnreadableMailError) return this.#reject(raw, err.message, err.messageId);
      if (err instanceof GatewayError) return this.#reject(raw, err.message, mail?.messageId ?? "");
      throw err;
    }
  }

  /**
   * Processes one mail (in memory or in a file) as a stream (streamed_mail_reader.ts): memory
   * does not grow with it; its file is adopted as a blob only when the mail is stored; records
   * keep its head.
   */
  async receiveMail(source: MailSource): Promise<ReceiveOutcome> {
    const head = await mailHead(source, RECORDED_HEAD_BYTES);
    const size = mailSize(source);
    let mail: ReadMail | undefined;
    try {
      mail = await readStreamedMail(source, this.deps.reader, {
        blobDir: this.deps.ctx.blobDir,
        maxPlaintextBytes: Math.max(
          size * 2,
          this.deps.reader.maxPlaintextBytes ?? MAX_PLAINTEXT_BYTES,
        ),
      });
      const outcome = await this.#process(head, mail, size, () => mailWhole(source));
      this.#noteCapabilities(mail);
      return outcome;
    } catch (err) {
      if (err instanceof UnreadableMailError) {
        return this.#reject(head, err.message, err.messageId, size);
      }
      if (err instanceof GatewayError) {
        return this.#reject(head, err.message, mail?.messageId ?? "", size);
      }
      throw err;
    } finally {
      // Adopted into a blob when stored; otherwise (and once adopted: a no-op) removed.
      if (mail !== undefined) await discardSpooled(mail.content);
    }
  }

  /**
   * Shows the chat message of a file that arrived as relay parts: `raw` is its announcing mail,
   * `file` the assembled, verified blob. Stored once (a second call finds it by Message-ID).
   */
  async receiveAssembled(
    raw: Uint8Array,
    file: BlobFile,
  ): Promise<{ msgId: number; chatId: number } | undefined> {
    const mail = await readMail(raw, this.deps.reader);
    if (mail.signer === undefined || mail.signerKey === undefined) return undefined;
    const known = this.deps.ctx.store.msgs.byRfc724Mid(mail.messageId);
    if (known !== undefined) return { msgId: known.id, chatId: known.chatId };
    const assignment = assignChat(mail);
    if (assignment.kind === "discard") return undefined;
    const out = await this.#storeMessage(mail, assignment, file);
    return out.kind === "message" ? { msgId: out.msgId, chatId: out.chatId } : undefined;
  }

  /** A verified mail says whether its sender's gateway takes relay parts (docs/transfer.md). */
  #noteCapabilities(mail: ReadMail): void {
    if (!mail.encrypted || mail.signer === undefined) return;
    const caps = mail.headers.get(Header.EDGE_CAPABILITIES) ?? "";
    this.deps.ctx.store.contacts.setLargeFiles(
      mail.signer,
      caps.split(/[\s,]+/).includes(Capability.LARGE_FILES),
    );
  }

  async #process(
    raw: Uint8Array,
    mail: ReadMail,
    size?: number,
    whole: () => Promise<Uint8Array> = () => Promise.resolve(raw),
  ): Promise<ReceiveOutcome> {
    if (this.deps.ctx.store.msgs.byRfc724Mid(mail.messageId) !== undefined) {
      return { kind: "duplicate" };
    }
    const stepHeader = mail.headers.get(Header.SECURE_JOIN);
    const step = parseSecureJoinStep(stepHeader);
    if (!mail.encrypted) {
      if (isSecureJoinRequest(step)) {
        await this.deps.secureJoin.onRequest(mail, step);
        return { kind: "securejoin", step };
      }
      return this.#reject(
        raw,
        "unencrypted mail (only SecureJoin requests may be)",
        mail.messageId,
        size,
      );
    }
    if (mail.signer === undefined || mail.signerKey === undefined) {
      const why = mail.unverified;
      const text = `not signed by a key of ${mail.from.addr}` + (why ? ` (${why.detail})` : "");
      if (why?.reason === Unverified.MISSING_KEY || why?.reason === Unverified.INVALID) {
        throw new RetryableMailError(text, mail.messageId);
      }
      return this.#reject(raw, text, mail.messageId, size);
    }
    if (mail.signer === this.deps.selfFingerprint) {
      return { kind: "ignored", reason: "our own mail" };
    }
    if (stepHeader !== undefined && step === undefined) {
      return { kind: "ignored", reason: `unknown SecureJoin step "${stepHeader.trim()}"` };
    }
    if (step !== undefined && step !== SecureJoinStep.VG_MEMBER_ADDED) {
      await this.deps.secureJoin.onStep(mail, step);
      return { kind: "securejoin", step };
    }
    // vg-member-added ends a group join and is the group's member-added message for everyone.
    if (step !== undefined) await this.deps.secureJoin.onStep(mail, step);
    const transfer = await this.deps.transfers?.receive(mail, whole);
    if (transfer?.kind === "rejected") {
      return this.#reject(raw, transfer.reason, mail.messageId, size);
    }
    if (transfer !== undefined) return transfer;
    const pdus = mail.headers.getAll(Header.EDGE_PRV_PDU);
    if (pdus.length > 0 && chatContent(mail).file === undefined) {
      const contact = this.#contacts.byFingerprint(mail.signer);
      if (contact === undefined) {
        const read = await this.deps.protectedFiles.onStrangerPdus(
          pdus,
          senderOf(mail),
          () => this.#contacts.upsertPeerFromKey(senderKey(mail)).id,
        );
        if (!read) return { kind: "ignored", reason: "PDUs from an unknown key" };
        return { kind: "pdus", count: pdus.length };
      }
      await this.deps.protectedFiles.onPdus(pdus, senderOf(mail), contact.id);
      return { kind: "pdus", count: pdus.length };
    }
    const receipt = receiptContent(mail);
    if (receipt !== undefined) return this.#applyReceipt(mail, receipt);
    const control = chatControl(mail);
    if (control !== undefined) {
      const contact = this.#contacts.byFingerprint(mail.signer);
      if (contact === undefined) {
        return { kind: "ignored", reason: `${control.kind} from an unknown key` };
      }
      const changed = await this.#controls.apply(control, contact.id, mail.sentAt);
      return { kind: "control", action: control.kind, changed };
    }
    const assignment = assignChat(mail);
    if (assignment.kind === "discard") return { kind: "ignored", reason: assignment.reason };
    return await this.#storeMessage(mail, assignment);
  }

  /**
   * Records a mail reception gave up on without reading it (too large, or failed too often):
   * `head` is its start, `size` its whole length; the Message-ID comes from the head.
   */
  giveUp(head: Uint8Array, size: number, reason: string): ReceiveOutcome {
    return this.#reject(head, reason, sniffMessageId(head), size);
  }

  #reject(raw: Uint8Array, reason: string, messageId: string, size?: number): ReceiveOutcome {
    this.deps.ctx.store.receiveErrors.add({ messageId, reason, raw, size });
    log.warn("mail not accepted; recorded as a receive error", { messageId, reason });
    this.deps.ctx.tx.emit({ kind: "Warning", msg: `received mail not accepted: ${reason}` });
    return { kind: "rejected", reason };
  }

  #applyReceipt(
    mail: ReadMail,
    r: { messageIds: readonly string[]; disposition: string },
  ): ReceiveOutcome {
    const contact = this.#contacts.byFingerprint(mail.signer!);
    if (contact === undefined) return { kind: "ignored", reason: "receipt from an unknown key" };
    let changed = 0;
    this.deps.ctx.tx.run(() => {
      for (const id of r.messageIds) {
        const m = this.deps.ctx.store.msgs.byRfc724Mid(id);
        if (m === undefined || m.fromId !== ContactId.SELF) continue;
        if (!this.#chats.contactIds(m.chatId).includes(contact.id)) continue;
        if (r.disposition === "displayed") {
          if (this.#states.markReadBy(m.id, contact.id, mail.sentAt)) changed++;
        } else if (r.disposition === "processed") {
          if (this.#states.markDeliveredToDevice(m.id)) changed++;
        }
      }
    });
    return { kind: "receipt", changed };
  }

  /**
   * The chat a message goes to, for the assignment's kind (inside the storing transaction), with
   * the info text of a group or channel system message, or a reason it goes nowhere.
   */
  #chatOf(
    mail: ReadMail,
    assignment: ChatAssignment,
    senderId: number,
    prep: GroupPrep,
    systemType: string | undefined,
  ): ChatTarget {
    switch (assignment.kind) {
      case "single":
        return { kind: "chat", chatId: this.#chats.getOrCreate1to1(senderId).chatId };
      case "group":
        return this.#groups.apply(
          mail,
          assignment.grpid,
          assignment.name,
          senderId,
          prep,
          systemType,
        );
      case "channel":
        return this.#channels.applyReceived(mail, assignment.listId, senderId);
      case "discard":
        return assignment;
    }
  }

  /**
   * Keys from `Autocrypt-Gossip` that Delta Chat would accept: on signed mail, for an address in
   * the inner To other than the sender's, with a readable key.
   */
  async #gossipPeers(mail: ReadMail): Promise<PeerKey[]> {
    const to = new Set(parseMailboxList(mail.headers.get(Header.TO)).map((m) => m.addr));
    const out: PeerKey[] = [];
    for (const g of mail.gossip) {
      const addr = g.addr.toLowerCase();
      if (!to.has(addr) || addr === mail.from.addr) continue;
      try {
        const key = await this.deps.reader.keys.get(g.keydata);
        out.push({ addr, fingerprint: fingerprintOf(key), publicKey: g.keydata });
      } catch {
        log.warn("unreadable gossip key ignored", { messageId: mail.messageId });
      }
    }
    return out;
  }

  async #storeMessage(
    mail: ReadMail,
    assignment: ChatAssignment,
    assembled?: BlobFile,
  ): Promise<ReceiveOutcome> {
    const gossip = await this.#gossipPeers(mail);
    const prep = assignment.kind === "group" ? await prepareGroup(this.deps.ctx, mail) : {};
    const read = chatContent(mail);
    const content = assembled === undefined
      ? read
      : { ...read, viewtype: viewtypeOfMime(assembled.mime) };
    const file = assembled ??
      (content.file && (content.file.spooled === undefined
        ? await writeBlob(
          this.deps.ctx.blobDir,
          content.file.bytes,
          content.file.name,
          content.file.mime,
        )
        : await adoptSpooled(
          this.deps.ctx.blobDir,
          content.file.spooled,
          content.file.name,
          content.file.mime,
        )));
    const pdus = mail.headers.getAll(Header.EDGE_PRV_PDU);
    const prv = file && pdus.length > 0
      ? await this.deps.protectedFiles.prepare(pdus, senderOf(mail), file)
      : undefined;
    const wantsMdn = mail.headers.get(Header.CHAT_DISPOSITION_NOTIFICATION_TO);
    const wantsReceipt = mail.headers.get(Header.EDGE_DELIVERY_RECEIPT_TO);
    return this.deps.ctx.tx.run((): ReceiveOutcome => {
      const contact = this.#contacts.upsertPeerFromKey(senderKey(mail));
      for (const peer of gossip) this.#contacts.upsertPeerFromKey(peer);
      const target = this.#chatOf(mail, assignment, contact.id, prep, content.systemType);
      if (target.kind === "discard") {
        log.info("message not stored", { messageId: mail.messageId, reason: target.reason });
        return { kind: "ignored", reason: target.reason };
      }
      const chatId = target.chatId;
      this.#chats.applyPeerTimer(chatId, ephemeralTimerOf(mail));
      const result = storeIncoming(this.deps.ctx, {
        rfc724Mid: mail.messageId,
        chatId,
        fromId: contact.id,
        text: target.info?.text ?? content.text,
        quote: content.quote,
        isInfo: content.systemType !== undefined,
        systemType: target.info?.systemType ?? content.systemType,
        subject: mail.headers.get(Header.SUBJECT) ?? "",
        timestampSent: mail.sentAt,
        viewtype: content.viewtype,
        file,
        announcedFile: content.file ? undefined : content.announcedFile,
        postMessageId: content.postMessageId,
        fromFingerprint: mail.signer,
        mdnRequested: content.systemType === undefined && sameAddr(wantsMdn, mail.from.addr),
        inReplyTo: stripAngles(mail.headers.get(Header.IN_REPLY_TO)),
      });
      if (result.outcome === "created" && prv !== undefined) {
        this.deps.protectedFiles.record(prv, result.msgId, chatId, contact.id);
      }
      if (result.outcome === "created" && sameAddr(wantsReceipt, mail.from.addr)) {
        // In this transaction: the owed receipt is stored with the message (crash-safe).
        this.deps.deliveryReceiptWanted?.(contact.id, mail.messageId);
      }
      return { kind: "message", chatId, ...result };
    });
  }
}

function senderOf(mail: ReadMail): PduSender {
  return { fingerprint: mail.signer!, publicKey: mail.signerKey! };
}

/** A chat message's `Ephemeral-Timer` in seconds; absent or unreadable → 0 (off), as Delta Chat. */
export function ephemeralTimerOf(mail: ReadMail): number {
  const value = mail.headers.get(Header.EPHEMERAL_TIMER)?.trim() ?? "";
  const seconds = /^\d{1,10}$/.test(value) ? Number(value) : 0;
  return seconds <= 0xffff_ffff ? seconds : 0;
}

/** True when a header names exactly `addr` (Chat-Disposition-Notification-To and the like). */
function sameAddr(header: string | undefined, addr: string): boolean {
  return header !== undefined && parseMailbox(header).addr === addr;
}
