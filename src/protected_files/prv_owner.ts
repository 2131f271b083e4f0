/**
 * The owner's side of protected files: protect a file (`secure_send_file`), the PDUs that travel
 * with its `.prv`, answers to requests (re-checking the rules before every grant), recipients a
 * forward adds, renewals the owner grants or denies, and revocation.
 */
import { baseName, type BlobFile, mimeOf } from "../core/blobs.ts";
import { Chats } from "../core/chats/mod.ts";
import { type FileAccessRoots, openAttachableFile } from "../core/file_access.ts";
import { Messages } from "../core/chats/mod.ts";
import { GatewayError, InvalidParamsError, NotFoundError } from "../errors.ts";
import { logger } from "../log.ts";
import type { AccessRecord, ChatRecord, ContactRecord, SentFileRecord } from "../store/mod.ts";
import { deviceTagOf, deviceWrap, secondShare, splitKey } from "./key_shares.ts";
import {
  type AccessRules,
  foldPdu,
  PDU_VERSION,
  pduB64,
  PduType,
  type RequestPdu,
  shareB64,
  signPdu,
} from "./pdu.ts";
import { accessRules, checkForwardAtOwner } from "./prv_forward.ts";
import { nowOf, type PrvDeps, sendPdus } from "./prv_mail.ts";
import type { PduSender } from "../core/receive/mod.ts";
import { encryptToPrv, type PrvFileEncryption, prvPathFor } from "../prv/mod.ts";

const log = logger("prv");

/** `PrivittySendFileResult` (docs/contract.md §2), exactly. */
export interface SendFileResult {
  readonly encrypted_path: string;
  readonly plaintext_hash: string;
  readonly prv_file_hash: string;
  readonly file_pdu_b64: string;
  readonly otk_pdu_b64: string;
  readonly file_id: number;
}

/** What `protect` needs besides the file. */
export interface ProtectRequest {
  readonly chatId: number;
  /** The peer of a 1:1 chat (`secure_send_file`); undefined for every member (groups). */
  readonly peerContactId?: number;
  readonly plaintextPath: string;
  readonly rules: AccessRules;
  /** The files directory and data directory (`openAttachableFile`'s roots, no blobs). */
  readonly roots: FileAccessRoots;
  /** The method name for messages. */
  readonly method: string;
}

/** The owner's operations. */
export class PrvOwner {
  constructor(private readonly d: PrvDeps) {}

  /** Recipients of a protect request: the chat's members with keys, checked against the peer. */
  #recipients(req: ProtectRequest): { chat: ChatRecord; recipients: ContactRecord[] } {
    const chat = new Chats(this.d.ctx).require(req.chatId);
    const recipients = new Messages(this.d.ctx).sendRecipients(chat);
    if (req.peerContactId !== undefined && !recipients.some((c) => c.id === req.peerContactId)) {
      throw new GatewayError(
        `${req.method}: contact ${req.peerContactId} is not the peer of chat ${req.chatId}; ` +
          `use get_chat_contacts and pick the member that is not 1`,
      );
    }
    return { chat, recipients };
  }

  /**
   * Encrypts the plaintext (opened once through the file rules, streamed) to
   * `<plaintext_path>.prv` atomically, splits its key for every recipient, signs the file_pdu
   * and the otk_pdus and stores everything; `send_msg` with the `.prv` then sends the PDUs.
   */
  async protect(req: ProtectRequest): Promise<SendFileResult> {
    const minutes = req.rules.duration_minutes;
    if (!Number.isInteger(minutes) || minutes < 0) {
      throw new InvalidParamsError(
        `duration_minutes must be 0 (unlimited) or a positive number of minutes, got ${minutes}`,
      );
    }
    const { chat, recipients } = this.#recipients(req);
    await using file = await openAttachableFile(req.plaintextPath, req.roots, {
      method: req.method,
      verb: "protected",
    });
    // Read at offsets straight into the writer's batches (no stream, no copy).
    const enc = await encryptToPrv(file, file.size, prvPathFor(file.path));
    try {
      return await this.#record(req, chat, recipients, file.path, enc);
    } catch (err) {
      // Not recorded (a full disk, say): no `.prv` stays behind that no file id names.
      enc.cek.fill(0);
      await Deno.remove(enc.path).catch(() => {});
      throw err;
    }
  }

  /** Signs the PDUs of an encrypted file and stores it as sent; returns the result. */
  async #record(
    req: ProtectRequest,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
    plaintextPath: string,
    enc: PrvFileEncryption,
  ): Promise<SendFileResult> {
    const minutes = req.rules.duration_minutes;
    const now = nowOf(this.d);
    const name = baseName(plaintextPath);
    const base = { v: PDU_VERSION, file_uid: enc.fileUid, issued_at: now } as const;
    const filePdu = await signPdu({
      ...base,
      type: PduType.FILE,
      owner: this.d.self.fingerprint,
      recipients: recipients.map((c) => c.fingerprint),
      rules: req.rules,
      plaintext_sha256: enc.plaintextSha256,
      prv_sha256: enc.prvSha256,
      name,
      mime: mimeOf(name),
      size: enc.plaintextSize,
    }, this.d.self.privateKey);
    const shares = await Promise.all(recipients.map(async (c) => {
      const { s1 } = splitKey(enc.cek);
      const otk = await signPdu({
        ...base,
        type: PduType.OTK,
        recipient: c.fingerprint,
        s1: shareB64(s1),
      }, this.d.self.privateKey);
      return { contactId: c.id, fingerprint: c.fingerprint, s1, otkPdu: otk.encoded };
    }));
    const fileId = this.d.ctx.store.protectedFiles.insertSent({
      fileUid: enc.fileUid,
      chatId: chat.id,
      path: enc.path,
      prvSha256: enc.prvSha256,
      plaintextSha256: enc.plaintextSha256,
      name,
      mime: mimeOf(name),
      size: enc.plaintextSize,
      cek: deviceWrap(this.d.keys.owner, "cek", enc.fileUid, enc.cek),
      keyTag: deviceTagOf(this.d.keys.owner),
      allowDownload: req.rules.allow_download,
      allowForward: req.rules.allow_forward,
      durationMinutes: minutes,
      filePdu: filePdu.encoded,
      createdAt: now,
    }, shares);
    enc.cek.fill(0);
    const peer = shares.find((s) => s.contactId === req.peerContactId) ?? shares[0];
    log.info("file protected", { file_id: fileId, chat_id: chat.id, bytes: enc.plaintextSize });
    return {
      encrypted_path: enc.path,
      plaintext_hash: enc.plaintextSha256,
      prv_file_hash: enc.prvSha256,
      file_pdu_b64: pduB64(filePdu.encoded),
      otk_pdu_b64: pduB64(peer.otkPdu),
      file_id: fileId,
    };
  }

  /**
   * The CEK of a sent file (stored wrapped under the owner key). A CEK wrapped under another key
   * (a v1 row the start could not migrate, docs/identity.md) is an error, never unwrapped: a
   * wrong CEK would become wrong key shares for every recipient.
   */
  cekOf(sent: Pick<SentFileRecord, "id" | "fileUid" | "cek" | "keyTag">): Uint8Array {
    if (sent.keyTag !== deviceTagOf(this.d.keys.owner)) {
      throw new GatewayError(
        `the key of protected file ${sent.id} is wrapped under another device's key (stored by ` +
          "an earlier build on a device this data directory no longer runs on); it can still " +
          "be revoked, but no key share can be given for it",
      );
    }
    return deviceWrap(this.d.keys.owner, "cek", sent.fileUid, sent.cek);
  }

  /** The sent file whose `.prv` is `blob` (by content hash), or undefined. */
  sentOfBlob(blob: BlobFile): SentFileRecord | undefined {
    if (!blob.blob.endsWith(".prv")) return undefined;
    return this.d.ctx.store.protectedFiles.sentByHashPrefix(blob.blob.slice(0, 32));
  }

  /**
   * The PDUs that go with `sent`'s `.prv` to `recipients`: the file_pdu and, per recipient, its
   * otk_pdu and a first grant (S2, window from its receipt). In a 1:1 chat they all ride in the
   * chat mail (`inMail`); with several recipients only the file_pdu does, and each recipient's
   * otk_pdu and grant go in a hidden mail encrypted to it alone (`separate`), since a group
   * mail is readable by every member.
   */
  /**
   * Throws GatewayError (-1 naming the rule) when `sent` may not go to `recipients` in chat
   * `chatId`: one it was not protected for, or one whose access was revoked; otherwise each
   * recipient's access row, by contact id.
   */
  checkSend(
    sent: SentFileRecord,
    chatId: number,
    recipients: readonly ContactRecord[],
  ): Map<number, AccessRecord> {
    const access = this.d.ctx.store.protectedFiles.accessList(sent.id);
    const byContact = new Map(access.map((a) => [a.contactId, a]));
    const stranger = recipients.find((c) => !byContact.has(c.id));
    if (stranger !== undefined) {
      throw new GatewayError(
        `send_msg: this .prv (file ${sent.id}) was protected for chat ${sent.chatId}; ` +
          `${stranger.addr} in chat ${chatId} is not one of its recipients: protect the file ` +
          `for this chat with secure_send_file`,
      );
    }
    const revoked = recipients.find((c) => byContact.get(c.id)!.state === "revoked");
    if (revoked !== undefined) {
      throw new GatewayError(`send_msg: access of ${revoked.addr} to file ${sent.id} was revoked`);
    }
    return byContact;
  }

  async pdusForSend(
    sent: SentFileRecord,
    chatId: number,
    recipients: readonly ContactRecord[],
  ): Promise<{ inMail: string[]; separate: Map<number, string[]> }> {
    const byContact = this.checkSend(sent, chatId, recipients);
    const per = new Map<number, string[]>();
    for (const c of recipients) {
      const a = byContact.get(c.id)!;
      const grant = await signPdu({
        v: PDU_VERSION,
        file_uid: sent.fileUid,
        issued_at: nowOf(this.d),
        type: PduType.GRANT,
        recipient: a.fingerprint,
        s2: shareB64(secondShare(this.cekOf(sent), a.s1)),
        not_after: 0,
        request_id: "",
      }, this.d.self.privateKey);
      per.set(c.id, [a.otkPdu, grant.encoded]);
    }
    if (recipients.length === 1) {
      return {
        inMail: [sent.filePdu, ...per.get(recipients[0].id)!].map(foldPdu),
        separate: new Map(),
      };
    }
    return { inMail: [foldPdu(sent.filePdu)], separate: per };
  }

  /**
   * A recipient's request, checked against the rules before anything is granted: revoked →
   * the revoke again; an `open` within the window → a grant up to the window's end (the window
   * starts at the recipient's receipt, never before the file was protected nor after now);
   * a `renew` → waiting for the owner (`PrivittyAccessRenewRequested`).
   */
  async onRequest(pdu: RequestPdu, contactId: number, sender: PduSender): Promise<void> {
    const store = this.d.ctx.store.protectedFiles;
    const sent = store.sentByUid(pdu.file_uid);
    if (sent !== undefined && pdu.forward !== undefined && !store.accessOf(sent.id, contactId)) {
      return await this.onForwardRequest(pdu, sender, () => contactId);
    }
    const access = sent && store.accessOf(sent.id, contactId);
    if (sent === undefined || access === undefined || access.fingerprint !== pdu.requester) {
      log.warn("access request for an unknown file or recipient ignored", {
        contact_id: contactId,
      });
      return;
    }
    const now = nowOf(this.d);
    if (access.state === "revoked") {
      return await this.#sendRevoke(sent, contactId, access.fingerprint);
    }
    if (pdu.reason === "renew") {
      this.d.ctx.tx.run((emit) => {
        store.updateAccess(sent.id, contactId, {
          state: "waiting_owner_action",
          requestId: pdu.request_id,
        });
        emit({
          kind: "PrivittyAccessRenewRequested",
          chatId: sent.chatId,
          fileId: sent.id,
          requesterContactId: contactId,
        });
      });
      return;
    }
    if (access.state !== "active") return; // denied or waiting: nothing until the owner acts
    const minutes = accessRules(sent, access).duration_minutes;
    let { windowStart, windowEnd } = access;
    if (windowStart === 0) {
      windowStart = Math.min(Math.max(pdu.received_at, sent.createdAt), now);
      windowEnd = minutes > 0 ? windowStart + minutes * 60 : 0;
      store.updateAccess(sent.id, contactId, { windowStart, windowEnd });
    }
    if (windowEnd > 0 && now >= windowEnd) return; // expired: only a renewal reopens it
    if (!this.#keyUsable(sent, contactId)) return;
    await this.#sendGrant(sent, contactId, windowEnd, pdu.request_id);
  }

  /** Whether `sent`'s CEK is wrapped under this installation's owner key (docs/identity.md). */
  holdsKey(sent: Pick<SentFileRecord, "keyTag">): boolean {
    return sent.keyTag === deviceTagOf(this.d.keys.owner);
  }

  /**
   * False (logged as an error) when `sent`'s CEK is wrapped under a key this installation does
   * not hold: a request is then left unanswered rather than answered with a wrong share.
   */
  #keyUsable(sent: SentFileRecord, contactId?: number): boolean {
    if (this.holdsKey(sent)) return true;
    log.error(
      "access request not answered: the key of this protected file is wrapped under another " +
        "device's key (docs/identity.md); it can only be revoked",
      { file_id: sent.id, contact_id: contactId ?? null },
    );
    return false;
  }

  /**
   * A request from someone who is not (yet) a recipient, carrying the forward that made it one:
   * checked (`checkForwardAtOwner`); when it holds, the requester becomes a recipient of its own
   * (a fresh S1 split by the owner, the forward's rules, the forwarder noted), the owner sees
   * `PrivittyFileAccessChanged`, and the request is answered like any `open`. A request that
   * fails the check is dropped and logged, and no contact is created for an unknown requester.
   */
  async onForwardRequest(
    pdu: RequestPdu,
    sender: PduSender,
    contactIdOf: () => number,
  ): Promise<void> {
    const store = this.d.ctx.store.protectedFiles;
    const sent = store.sentByUid(pdu.file_uid);
    if (sent === undefined || pdu.forward === undefined || pdu.requester !== sender.fingerprint) {
      log.warn("forwarded access request for an unknown file ignored");
      return;
    }
    let verdict;
    try {
      verdict = await checkForwardAtOwner(pdu.forward, {
        sent,
        access: store.accessList(sent.id),
        selfFingerprint: this.d.self.fingerprint,
        requester: sender.fingerprint,
        now: nowOf(this.d),
        keyOf: (id) => this.d.ctx.store.contacts.get(id)?.publicKey,
      });
    } catch (err) {
      log.warn("forwarded access request refused", {
        file_id: sent.id,
        reason: (err as Error).message,
      });
      return;
    }
    if (!this.#keyUsable(sent)) return; // before a contact is made for the requester
    const contactId = contactIdOf();
    if (store.accessOf(sent.id, contactId) === undefined) {
      const { s1 } = splitKey(this.cekOf(sent));
      const otk = await signPdu({
        v: PDU_VERSION,
        file_uid: sent.fileUid,
        issued_at: nowOf(this.d),
        type: PduType.OTK,
        recipient: sender.fingerprint,
        s1: shareB64(s1),
      }, this.d.self.privateKey);
      this.d.ctx.tx.run((emit) => {
        store.insertForwardedAccess({
          fileId: sent.id,
          contactId,
          fingerprint: sender.fingerprint,
          s1,
          otkPdu: otk.encoded,
          forwardedBy: verdict.forwarder.contactId,
          rules: JSON.stringify(verdict.rules),
        });
        emit({ kind: "PrivittyFileAccessChanged", chatId: sent.chatId, fileId: sent.id });
      });
      log.info("recipient added by a forward", {
        file_id: sent.id,
        contact_id: contactId,
        forwarded_by: verdict.forwarder.contactId,
      });
    }
    // A recipient now: the rest is an ordinary request (without the forward it came with).
    const { forward: _forward, ...request } = pdu;
    await this.onRequest(request, contactId, sender);
  }

  async #sendGrant(
    sent: SentFileRecord,
    contactId: number,
    notAfter: number,
    requestId: string,
  ): Promise<void> {
    const a = this.d.ctx.store.protectedFiles.accessOf(sent.id, contactId)!;
    const grant = await signPdu({
      v: PDU_VERSION,
      file_uid: sent.fileUid,
      issued_at: nowOf(this.d),
      type: PduType.GRANT,
      recipient: a.fingerprint,
      s2: shareB64(secondShare(this.cekOf(sent), a.s1)),
      not_after: notAfter,
      request_id: requestId,
    }, this.d.self.privateKey);
    // The otk_pdu again first: a recipient whose own copy of it never arrived completes S1.
    await sendPdus(this.d, contactId, [a.otkPdu, grant.encoded]);
  }

  async #sendRevoke(sent: SentFileRecord, contactId: number, fingerprint: string): Promise<void> {
    const revoke = await signPdu({
      v: PDU_VERSION,
      file_uid: sent.fileUid,
      issued_at: nowOf(this.d),
      type: PduType.REVOKE,
      recipient: fingerprint,
    }, this.d.self.privateKey);
    await sendPdus(this.d, contactId, [revoke.encoded]);
  }

  /** A sent file by id, or NotFoundError naming it. */
  #sent(fileId: number, method: string): SentFileRecord {
    const sent = this.d.ctx.store.protectedFiles.sent(fileId);
    if (sent === undefined) {
      throw new NotFoundError(`${method}: file ${fileId} is not a file this gateway protected`);
    }
    return sent;
  }

  /**
   * Ends `peerContactId`'s access to file `fileId` sent in chat `chatId`: no grant is given any
   * more and a revoke goes to the peer, whose gateway drops its shares and ends running streams.
   * `PrivittyFileAccessRevoked{chatId, contactId, fileId}` follows. Revoking twice sends again.
   */
  async revoke(chatId: number, fileId: number, peerContactId: number): Promise<void> {
    const method = "secure_revoke_file_access";
    const sent = this.#sent(fileId, method);
    if (sent.chatId !== chatId) {
      throw new GatewayError(
        `${method}: file ${fileId} was sent in chat ${sent.chatId}, not ${chatId}`,
      );
    }
    const access = this.d.ctx.store.protectedFiles.accessOf(fileId, peerContactId);
    if (access === undefined) {
      throw new NotFoundError(
        `${method}: contact ${peerContactId} is not a recipient of file ${fileId}`,
      );
    }
    await this.#sendRevoke(sent, peerContactId, access.fingerprint);
    this.d.ctx.tx.run((emit) => {
      this.d.ctx.store.protectedFiles.updateAccess(fileId, peerContactId, { state: "revoked" });
      emit({ kind: "PrivittyFileAccessRevoked", chatId, contactId: peerContactId, fileId });
    });
  }

  /**
   * The owner's answer to a renewal request of `contactId` for file `fileId`: grant (a new
   * window of `minutes`, default the file's rule, from now) or deny. -1 when no renewal is
   * pending or access was revoked. `PrivittyFileAccessChanged{chatId, fileId}` follows.
   */
  async respondRenewal(
    fileId: number,
    contactId: number,
    grant: boolean,
    minutes?: number,
  ): Promise<void> {
    const method = "secure_respond_access_request";
    const sent = this.#sent(fileId, method);
    const store = this.d.ctx.store.protectedFiles;
    const access = store.accessOf(fileId, contactId);
    if (access === undefined) {
      throw new NotFoundError(
        `${method}: contact ${contactId} is not a recipient of file ${fileId}`,
      );
    }
    if (access.state !== "waiting_owner_action") {
      throw new GatewayError(
        `${method}: contact ${contactId} has no pending renewal request for file ${fileId} ` +
          `(its access is ${access.state})`,
      );
    }
    if (grant) {
      const now = nowOf(this.d);
      const m = minutes ?? accessRules(sent, access).duration_minutes;
      const windowEnd = m > 0 ? now + m * 60 : 0;
      store.updateAccess(fileId, contactId, { windowStart: now, windowEnd });
      await this.#sendGrant(sent, contactId, windowEnd, access.requestId);
    } else {
      const deny = await signPdu({
        v: PDU_VERSION,
        file_uid: sent.fileUid,
        issued_at: nowOf(this.d),
        type: PduType.DENY,
        recipient: access.fingerprint,
        request_id: access.requestId,
      }, this.d.self.privateKey);
      await sendPdus(this.d, contactId, [deny.encoded]);
    }
    this.d.ctx.tx.run((emit) => {
      store.updateAccess(fileId, contactId, {
        state: grant ? "active" : "denied",
        requestId: "",
      });
      emit({ kind: "PrivittyFileAccessChanged", chatId: sent.chatId, fileId });
    });
  }
}
