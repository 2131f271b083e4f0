/**
 * Protected files for one account (docs/prv-format.md): the owner's and the recipient's sides
 * behind one object the account core, the RPC methods and the viewer use. It holds the grants in
 * memory (`GrantMemory`), so one instance lives as long as the daemon.
 */
import { deliveryState } from "./delivery_state.ts";
import { type BlobFile, blobPath } from "../core/blobs.ts";
import { ContactId } from "../constants.ts";
import type { OutgoingDraft, RenderedMail } from "../core/chats/mod.ts";
import type { PduSender, ProtectedFileReceiver } from "../core/receive/mod.ts";
import { GatewayError, NotFoundError } from "../errors.ts";
import type { ChatRecord, ContactRecord, MessageRecord, ReceivedFileRecord } from "../store/mod.ts";
import { type AccessVerdict, FileAccessState } from "./access_state.ts";
import { GrantMemory } from "./grant_memory.ts";
import { foldPdu, PduType } from "./pdu.ts";
import { PrvOpenCache } from "./prv_open_cache.ts";
import { signForward } from "./prv_forward.ts";
import { nowOf, type PrvDeps, renderPduMail } from "./prv_mail.ts";
import { type ProtectRequest, PrvOwner, type SendFileResult } from "./prv_owner.ts";
import { type PreparedFile, PrvRecipient, verifyAll } from "./prv_recipient.ts";
import { Header } from "../protocol.ts";

export type { SendFileResult } from "./prv_owner.ts";

/** What `secure_get_file_status` returns. */
export interface FileStatus {
  readonly file_id: number;
  readonly msg_id: number;
  readonly chat_id: number;
  /** `owner` for a file this gateway protected, `recipient` for one it received. */
  readonly role: "owner" | "recipient";
  readonly state: string;
  readonly reason: string;
  readonly allow_download: boolean;
  readonly allow_forward: boolean;
  readonly duration_minutes: number;
  /** Unix seconds the access ends (recipient), 0 unlimited. */
  readonly expires_at: number;
  readonly file_name: string;
  readonly file_size: number;
  /**
   * The owner's view of each recipient; `forwarded_by` is the recipient whose forward added it
   * (0 for a recipient of the owner's send).
   */
  readonly recipients?: readonly { contact_id: number; state: string; forwarded_by: number }[];
}

/** A file opened for reading: which key, where, which rules. */
export interface OpenedFile {
  readonly path: string;
  readonly cek: Uint8Array;
  readonly name: string;
  readonly allowDownload: boolean;
  readonly chatId: number;
  /** Aborts when access ends while the file is read (a revoke); absent for the owner. */
  readonly track?: { signal: AbortSignal; done(): void };
  /** The received file's id (absent for the owner's own file): `openCache.forgetFile` takes it. */
  readonly receivedFileId?: number;
}

/** Why a file cannot be opened now (HTTP 403 with the state). */
export class FileAccessDeniedError extends GatewayError {
  constructor(readonly verdict: AccessVerdict) {
    super(`access to this file is ${verdict.state}: ${verdict.reason}`);
  }
}

/** The account's protected files. */
export class ProtectedFiles implements ProtectedFileReceiver {
  readonly owner: PrvOwner;
  readonly recipient: PrvRecipient;
  /** What `/stream` verified when it opened a file; a received file's entry goes with its grant. */
  readonly openCache: PrvOpenCache = new PrvOpenCache();

  constructor(private readonly d: PrvDeps, readonly memory: GrantMemory = new GrantMemory()) {
    this.owner = new PrvOwner(d);
    this.recipient = new PrvRecipient(d, memory);
    memory.onDrop((fileId) => this.openCache.forgetFile(fileId));
  }

  protect(req: ProtectRequest): Promise<SendFileResult> {
    return this.owner.protect(req);
  }

  prepare(pdus: readonly string[], sender: PduSender, file: BlobFile): Promise<unknown> {
    return this.recipient.prepare(pdus, sender, file);
  }

  record(prepared: unknown, msgId: number, chatId: number, contactId: number): void {
    if (prepared !== undefined) {
      this.recipient.record(prepared as PreparedFile, msgId, chatId, contactId);
    }
  }

  async onPdus(pdus: readonly string[], sender: PduSender, contactId: number): Promise<void> {
    for (const pdu of await verifyAll(pdus, sender)) {
      if (pdu.type === PduType.REQUEST) {
        if (pdu.requester === sender.fingerprint) {
          await this.owner.onRequest(pdu, contactId, sender);
        }
      } else {
        this.recipient.apply(pdu, contactId);
      }
    }
  }

  /**
   * PDUs from a key that is no contact: only a request carrying a forward is read (someone a
   * recipient forwarded a file to); the contact is created only when the owner accepts it.
   */
  async onStrangerPdus(
    pdus: readonly string[],
    sender: PduSender,
    addContact: () => number,
  ): Promise<boolean> {
    let read = false;
    for (const pdu of await verifyAll(pdus, sender)) {
      if (pdu.type === PduType.REQUEST && pdu.forward !== undefined) {
        await this.owner.onForwardRequest(pdu, sender, addContact);
        read = true;
      }
    }
    return read;
  }

  /**
   * Checks, before anything is stored, that `draft.file` may be sent to `recipients` of `chat`:
   * a `.prv` of ours or a received one needs `authorize` (the license gate: it throws), ours must
   * have been protected for them, and a received one must be allowed to be forwarded (the same
   * refusals as `outgoing`). Other files pass.
   */
  admit(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
    authorize: () => void,
  ): void {
    const blob = draft.file;
    if (blob === undefined || !blob.blob.endsWith(".prv")) return;
    const sent = this.owner.sentOfBlob(blob);
    if (sent !== undefined) {
      authorize();
      this.owner.checkSend(sent, chat.id, recipients);
      return;
    }
    const received = this.d.ctx.store.protectedFiles.receivedByHashPrefix(blob.blob.slice(0, 32));
    if (received === undefined) return;
    authorize();
    this.#forwardRefusal(received);
  }

  /**
   * Prepares a `send_msg` of `draft.file`: a `.prv` this gateway protected gets its PDUs (in the
   * chat mail, or in mails of their own to each of several recipients, `separateMails`); a received `.prv` is a
   * forward: refused (-1 naming the rule) when its owner set allow_forward=false or revoked our
   * access, otherwise it gets a signed forward PDU per new recipient (`forwardPdus`). Other
   * files pass unchanged. `authorize` runs before either of the first two does anything, so that
   * `send_msg` can refuse to share a protected file without a license (it throws).
   */
  async outgoing(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
    authorize: () => void = () => {},
  ): Promise<{ draft: OutgoingDraft; separateMails?: RenderedMail[]; fileId?: number }> {
    const blob = draft.file;
    if (blob === undefined || !blob.blob.endsWith(".prv")) return { draft };
    const sent = this.owner.sentOfBlob(blob);
    if (sent !== undefined) {
      authorize();
      const { inMail, separate } = await this.owner.pdusForSend(sent, chat.id, recipients);
      const extraHeaders = inMail.map((p): [string, string] => [Header.EDGE_PRV_PDU, p]);
      return {
        draft: { ...draft, extraHeaders },
        ...(separate.size === 0 ? {} : {
          separateMails: await Promise.all(
            [...separate].map(([contactId, pdus]) => renderPduMail(this.d, contactId, pdus)),
          ),
        }),
        fileId: sent.id,
      };
    }
    const received = this.d.ctx.store.protectedFiles.receivedByHashPrefix(blob.blob.slice(0, 32));
    if (received === undefined) return { draft };
    authorize();
    const pdus = await this.#forwardPdus(received, recipients);
    const extraHeaders = pdus.map((p): [string, string] => [Header.EDGE_PRV_PDU, foldPdu(p)]);
    return { draft: { ...draft, extraHeaders } };
  }

  /**
   * The forward PDUs of a received file for `recipients` (the owner among them needs none):
   * the rules stay ours, so they can only stay or get stricter down a chain of forwards.
   */
  async #forwardPdus(
    rec: ReceivedFileRecord,
    recipients: readonly ContactRecord[],
  ): Promise<string[]> {
    const owner = this.#forwardRefusal(rec);
    const out: string[] = [];
    for (const c of recipients) {
      if (c.id === rec.ownerContactId || c.fingerprint === "") continue;
      const fwd = await signForward({
        fileUid: rec.fileUid,
        filePdu: rec.filePdu,
        owner,
        forwarder: this.d.self.fingerprint,
        recipient: c.fingerprint,
        rules: {
          allow_download: rec.allowDownload,
          allow_forward: rec.allowForward,
          duration_minutes: rec.durationMinutes,
        },
        now: nowOf(this.d),
      }, this.d.self.privateKey);
      out.push(fwd.encoded);
    }
    return out;
  }

  /**
   * Throws GatewayError (-1 naming the rule) when received file `rec` may not be forwarded;
   * otherwise its owner, whose key the forward PDUs are checked against.
   */
  #forwardRefusal(rec: ReceivedFileRecord): ContactRecord {
    const no = (why: string) =>
      new GatewayError(
        `send_msg: this protected file (file ${rec.id}) may not be forwarded: ${why}`,
      );
    if (!rec.allowForward) throw no("its owner set allow_forward=false");
    const v = this.recipient.verdict(rec);
    if (v.state === FileAccessState.REVOKED || v.state === FileAccessState.NOT_FOUND) {
      throw no(`access to it is ${v.state} (${v.reason})`);
    }
    const owner = this.d.ctx.store.contacts.get(rec.ownerContactId);
    if (rec.filePdu === "" || owner === undefined || owner.publicKey.length === 0) {
      throw no("it was received before this gateway kept what a forward carries");
    }
    return owner;
  }

  /** The state and rules of the protected file of message `msgId`. */
  status(msgId: number): FileStatus {
    const store = this.d.ctx.store.protectedFiles;
    const gone = this.d.ctx.store.msgs.get(msgId) === undefined
      ? store.receivedByMsg(msgId)
      : undefined;
    if (gone !== undefined) {
      return {
        ...this.#recipientStatus(gone, msgId),
        state: FileAccessState.DELETED,
        reason: "the message with this file was deleted on this gateway",
      };
    }
    const m = this.#message(msgId);
    if (m.fromId === ContactId.SELF) {
      const sent = store.sentByHashPrefix(m.file.slice(0, 32));
      if (sent === undefined) throw this.#notProtected(msgId);
      return {
        file_id: sent.id,
        msg_id: msgId,
        chat_id: m.chatId,
        role: "owner",
        // A CEK wrapped for another device (docs/identity.md) opens nothing and grants nothing.
        ...(this.owner.holdsKey(sent) ? { state: FileAccessState.ACTIVE, reason: "" } : {
          state: FileAccessState.NOT_FOUND,
          reason: "this file's key is wrapped under another device's key (an earlier build on " +
            "another device): recipients get no key share; it can still be revoked",
        }),
        allow_download: sent.allowDownload,
        allow_forward: sent.allowForward,
        duration_minutes: sent.durationMinutes,
        expires_at: 0,
        file_name: sent.name,
        file_size: sent.size,
        recipients: store.accessList(sent.id).map((a) => ({
          contact_id: a.contactId,
          state: a.state === FileAccessState.ACTIVE
            ? deliveryState(this.d.ctx, msgId, a.contactId) ?? a.state
            : a.state,
          forwarded_by: a.forwardedBy,
        })),
      };
    }
    const rec = store.receivedByMsg(msgId);
    if (rec === undefined) throw this.#notProtected(msgId);
    return this.#recipientStatus(rec, msgId);
  }

  #recipientStatus(rec: ReceivedFileRecord, msgId: number): FileStatus {
    const v = this.recipient.verdict(rec);
    return {
      file_id: rec.id,
      msg_id: msgId,
      chat_id: rec.chatId,
      role: "recipient",
      state: v.state,
      reason: v.reason,
      allow_download: rec.allowDownload,
      allow_forward: rec.allowForward,
      duration_minutes: rec.durationMinutes,
      expires_at: rec.windowEnd,
      file_name: rec.name,
      file_size: rec.size,
    };
  }

  #message(msgId: number): MessageRecord & { file: string } {
    const m = this.d.ctx.store.msgs.get(msgId);
    if (m === undefined || m.file === "" || !m.file.endsWith(".prv")) {
      throw new NotFoundError(`message ${msgId} not found or has no .prv file`);
    }
    return m;
  }

  #notProtected(msgId: number): NotFoundError {
    return new NotFoundError(
      `message ${msgId} has a .prv this gateway has no key information for (not_found)`,
    );
  }

  /**
   * Opens the `.prv` of message `msgId` for the viewer: undefined when there is no such message
   * or file; FileAccessDeniedError when access is not active (a file without a grant in memory
   * asks the owner first and is `requested`).
   */
  async open(msgId: number): Promise<OpenedFile | undefined> {
    // Narrow lookups (three message columns; the sent file's key fields): this runs per request.
    const m = this.d.ctx.store.msgs.fileOf(msgId);
    if (m === undefined || m.file === "" || !m.file.endsWith(".prv")) return undefined;
    const path = blobPath(this.d.ctx.blobDir, m.file);
    const store = this.d.ctx.store.protectedFiles;
    if (m.fromId === ContactId.SELF) {
      const sent = store.sentKeyByHashPrefix(m.file.slice(0, 32));
      if (sent === undefined) return undefined;
      return {
        path,
        cek: this.owner.cekOf(sent),
        name: sent.name,
        allowDownload: true,
        chatId: m.chatId,
      };
    }
    const rec = store.receivedByMsg(msgId);
    if (rec === undefined) {
      throw new FileAccessDeniedError({
        state: FileAccessState.NOT_FOUND,
        reason: "no key information arrived with this .prv",
      });
    }
    const v = await this.recipient.askIfNeeded(rec);
    if (v.state !== FileAccessState.ACTIVE) {
      this.openCache.forgetFile(rec.id); // expired, revoked, …: nothing it opened is kept
      throw new FileAccessDeniedError(v);
    }
    return {
      path,
      cek: this.recipient.contentKey(rec),
      name: rec.name,
      allowDownload: rec.allowDownload,
      chatId: rec.chatId,
      track: this.memory.track(rec.id),
      receivedFileId: rec.id,
    };
  }

  /** A received file by message id (renewal), or -1. */
  async requestRenewal(msgId: number): Promise<void> {
    this.#message(msgId);
    const rec = this.d.ctx.store.protectedFiles.receivedByMsg(msgId);
    if (rec === undefined) throw this.#notProtected(msgId);
    await this.recipient.requestRenewal(rec);
  }

  /**
   * The file id of a `.prv` path: the `encrypted_path` secure_send_file returned, or a blob path
   * as `get_messages` shows it (sent or received). NotFoundError otherwise.
   */
  fileIdByPath(path: string): number {
    const store = this.d.ctx.store.protectedFiles;
    const byPath = store.sentByPath(path);
    if (byPath !== undefined) return byPath.id;
    const prefix = this.d.ctx.blobDir.replace(/\/+$/, "") + "/";
    const name = path.startsWith(prefix) ? path.slice(prefix.length) : "";
    if (/^[0-9a-f]{32}\.prv$/.test(name)) {
      const hash = name.slice(0, 32);
      const id = store.sentByHashPrefix(hash)?.id ?? store.receivedByHashPrefix(hash)?.id;
      if (id !== undefined) return id;
    }
    throw new NotFoundError(
      `secure_get_file_id_by_path: "${path}" is not a protected file of this gateway (give the ` +
        `encrypted_path secure_send_file returned or the file path get_messages shows)`,
    );
  }
}
