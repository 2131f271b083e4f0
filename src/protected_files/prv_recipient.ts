/**
 * The recipient's side of protected files: a `.prv` received with its PDUs (from the owner, or
 * forwarded by another recipient) is checked and recorded (S1 stored, S2 in memory only),
 * grants, revokes and denials from the owner are applied, and the owner is asked for a grant
 * (on open, after a restart) or a renewal.
 */
import type { BlobFile } from "../core/blobs.ts";
import { Contacts } from "../core/contacts/mod.ts";
import type { PduSender } from "../core/receive/mod.ts";
import { GatewayError } from "../errors.ts";
import { logger } from "../log.ts";
import type { ReceivedFileRecord } from "../store/mod.ts";
import { type AccessVerdict, FileAccessState, recipientVerdict } from "./access_state.ts";
import { deviceTagOf, deviceWrap } from "./key_shares.ts";
import type { GrantMemory } from "./grant_memory.ts";
import {
  type AccessRules,
  type FilePdu,
  type ForwardPdu,
  type GrantPdu,
  type OtkPdu,
  type Pdu,
  PDU_VERSION,
  PduError,
  PduType,
  shareOf,
  signPdu,
  verifyPdu,
} from "./pdu.ts";
import { acceptForward } from "./prv_forward.ts";
import { nowOf, type PrvDeps, randomId, sendPdus } from "./prv_mail.ts";

const log = logger("prv");

/** Seconds before an unanswered `open` request is sent again. */
export const REQUEST_RETRY_SECONDS = 60;
/** PDUs read from one mail at most (each costs a signature check); the rest are dropped. */
export const MAX_PDUS_PER_MAIL = 64;

/** A `.prv` whose PDUs verified, ready to be recorded with its message. */
export interface PreparedFile {
  readonly file: FilePdu;
  /** The file_pdu as the owner signed it (kept: a forward carries it on). */
  readonly filePdu: string;
  /** The rules this copy follows: the file_pdu's, or a forward's (never looser). */
  readonly rules: AccessRules;
  readonly s1: Uint8Array;
  readonly grant?: GrantPdu;
  /** Set when the file came through a forward: the PDU and how to reach the owner. */
  readonly forward?: { encoded: string; ownerKey: Uint8Array; ownerAddr: string };
}

/** Verifies every PDU under the sender's key; the ones that do not verify are logged and dropped. */
export async function verifyAll(pdus: readonly string[], sender: PduSender): Promise<Pdu[]> {
  return (await verifyEncoded(pdus, sender)).map((v) => v.pdu);
}

/** `verifyAll` with each PDU's encoded form. */
export async function verifyEncoded(
  pdus: readonly string[],
  sender: PduSender,
): Promise<{ pdu: Pdu; encoded: string }[]> {
  const out: { pdu: Pdu; encoded: string }[] = [];
  if (pdus.length > MAX_PDUS_PER_MAIL) {
    log.warn("too many protected-file PDUs in one mail; the rest are dropped", {
      count: pdus.length,
    });
  }
  for (const encoded of pdus.slice(0, MAX_PDUS_PER_MAIL)) {
    try {
      const pdu = await verifyPdu(encoded, sender.publicKey);
      out.push({ pdu, encoded: encoded.replace(/\s+/g, "") });
    } catch (err) {
      log.warn("protected-file PDU dropped", { error: (err as Error).message });
    }
  }
  return out;
}

/** The recipient's operations. */
export class PrvRecipient {
  /** An otk_pdu or grant that came before its file (by file_uid; a few, for a short while). */
  readonly #early = new Map<string, Pdu[]>();

  constructor(private readonly d: PrvDeps, private readonly memory: GrantMemory) {}

  /**
   * The PDUs of a received `.prv`: a file_pdu by the sender (its owner) naming this `.prv`'s hash
   * and us among the recipients, and our otk_pdu; optionally our first grant.
   */
  async prepare(
    pdus: readonly string[],
    sender: PduSender,
    blob: BlobFile,
  ): Promise<PreparedFile | undefined> {
    const me = this.d.self.fingerprint;
    const encoded = await verifyEncoded(pdus, sender);
    const verified = encoded.map((v) => v.pdu);
    const found = encoded.find((v) => {
      const p = v.pdu;
      return p.type === PduType.FILE && p.owner === sender.fingerprint &&
        p.prv_sha256.slice(0, 32) === blob.blob.slice(0, 32) && p.recipients.includes(me);
    });
    if (found === undefined) return await this.#prepareForward(encoded, sender, blob);
    const file = found.pdu as FilePdu;
    // In a 1:1 chat our otk_pdu and first grant ride along; with several recipients they come
    // in a mail of their own, before or after this one (`#early` keeps those that came first).
    const early = this.#early.get(file.file_uid) ?? [];
    this.#early.delete(file.file_uid);
    const ours = [...verified, ...early];
    const otk = ours.find((p): p is OtkPdu =>
      p.type === PduType.OTK && p.file_uid === file.file_uid && p.recipient === me
    );
    const grant = ours.find((p): p is GrantPdu =>
      p.type === PduType.GRANT && p.file_uid === file.file_uid && p.recipient === me
    );
    try {
      return {
        file,
        filePdu: found.encoded,
        rules: file.rules,
        s1: otk ? shareOf(otk.s1, "otk_pdu.s1") : new Uint8Array(32),
        ...(grant === undefined ? {} : { grant }),
      };
    } catch (err) {
      log.warn("protected-file PDU dropped", { error: (err as Error).message });
      return undefined;
    }
  }

  /**
   * A `.prv` forwarded by `sender`: its forward PDU names us and `sender` as the forwarder, and
   * passes `acceptForward`. It brings no key share: S1 and S2 come from the owner on request.
   */
  async #prepareForward(
    encoded: readonly { pdu: Pdu; encoded: string }[],
    sender: PduSender,
    blob: BlobFile,
  ): Promise<PreparedFile | undefined> {
    const me = this.d.self.fingerprint;
    const fwd = encoded.find((v) =>
      v.pdu.type === PduType.FORWARD && v.pdu.recipient === me &&
      v.pdu.forwarder === sender.fingerprint
    );
    if (fwd === undefined) {
      log.warn("a .prv arrived without a file_pdu that describes it; it cannot be opened");
      return undefined;
    }
    try {
      const ok = await acceptForward(fwd.pdu as ForwardPdu, blob.blob.slice(0, 32));
      return {
        file: ok.file,
        filePdu: (fwd.pdu as ForwardPdu).file_pdu,
        rules: ok.rules,
        s1: new Uint8Array(32),
        forward: { encoded: fwd.encoded, ownerKey: ok.ownerKey, ownerAddr: ok.ownerAddr },
      };
    } catch (err) {
      log.warn("forwarded .prv refused; it cannot be opened", { error: (err as Error).message });
      return undefined;
    }
  }

  /**
   * Records a prepared `.prv` for message `msgId` (in the reception transaction); `senderId` is
   * the contact it came from: its owner, or for a forward the forwarder (the owner then becomes
   * a contact from the key the forward carries, so the request can reach it).
   */
  record(p: PreparedFile, msgId: number, chatId: number, senderId: number): void {
    const now = nowOf(this.d);
    const ownerContactId = p.forward === undefined ? senderId : new Contacts(this.d.ctx)
      .upsertPeerFromKey({
        addr: p.forward.ownerAddr,
        fingerprint: p.file.owner,
        publicKey: p.forward.ownerKey,
      }).id;
    const minutes = p.rules.duration_minutes;
    const windowEnd = minutes > 0 ? now + minutes * 60 : 0;
    const id = this.d.ctx.store.protectedFiles.insertReceived({
      msgId,
      chatId,
      ownerContactId,
      fileUid: p.file.file_uid,
      prvSha256: p.file.prv_sha256,
      // No otk_pdu yet (it comes in a mail of its own): zeros, filled in when it arrives.
      s1: p.s1.every((b) => b === 0)
        ? new Uint8Array(32)
        : deviceWrap(this.d.keys.recipient, "s1", p.file.file_uid, p.s1),
      allowDownload: p.rules.allow_download === true,
      allowForward: p.rules.allow_forward === true,
      durationMinutes: minutes,
      name: p.file.name,
      mime: p.file.mime,
      size: p.file.size,
      receivedAt: now,
      windowEnd,
      deviceTag: deviceTagOf(this.d.keys.recipient),
      filePdu: p.filePdu,
      forwardPdu: p.forward?.encoded ?? "",
    });
    if (p.grant !== undefined) this.#hold(id, p.grant, windowEnd);
  }

  #hold(fileId: number, g: GrantPdu, windowEnd: number): void {
    try {
      const s2 = shareOf(g.s2, "grant.s2");
      const notAfter = g.not_after > 0 ? g.not_after : windowEnd;
      this.memory.hold(fileId, { s2, notAfter });
    } catch (err) {
      log.warn("grant dropped", { error: (err as Error).message });
    }
  }

  /** Applies an otk_pdu, grant, revoke or deny from the owner (contact `ownerId`) to our copies. */
  apply(pdu: Pdu, ownerId: number): void {
    if (!("recipient" in pdu) || pdu.recipient !== this.d.self.fingerprint) return;
    const store = this.d.ctx.store.protectedFiles;
    const copies = store.receivedByUid(pdu.file_uid, ownerId);
    if (copies.length === 0 && (pdu.type === PduType.OTK || pdu.type === PduType.GRANT)) {
      if (this.#early.size >= 256) this.#early.delete(this.#early.keys().next().value!);
      this.#early.set(pdu.file_uid, [...(this.#early.get(pdu.file_uid) ?? []), pdu].slice(-4));
      return;
    }
    for (const rec of copies) {
      if (pdu.type === PduType.OTK) {
        if (rec.state !== "revoked" && rec.s1.every((b) => b === 0)) {
          store.setShare(
            rec.id,
            deviceWrap(this.d.keys.recipient, "s1", rec.fileUid, shareOf(pdu.s1, "otk_pdu.s1")),
          );
        }
        continue;
      }
      this.d.ctx.tx.run((emit) => {
        const changed = {
          kind: "PrivittyFileAccessChanged",
          chatId: rec.chatId,
          fileId: rec.id,
        } as const;
        switch (pdu.type) {
          case PduType.GRANT: {
            if (rec.state === "revoked") return;
            if (rec.state === "renew_requested" || rec.state === "denied") {
              store.updateReceived(rec.id, {
                state: "open",
                windowEnd: pdu.not_after,
                requestId: "",
                reason: "",
              });
            }
            this.#hold(rec.id, pdu, pdu.not_after > 0 ? pdu.not_after : rec.windowEnd);
            emit(changed);
            return;
          }
          case PduType.REVOKE: {
            store.updateReceived(rec.id, { state: "revoked", reason: "revoked by the owner" });
            store.dropShare(rec.id);
            this.memory.drop(rec.id);
            const ended = this.memory.endStreams(rec.id, "access to this file was revoked");
            log.info("access revoked by the owner", { file_id: rec.id, streams_ended: ended });
            emit({
              kind: "PrivittyFileAccessRevoked",
              chatId: rec.chatId,
              contactId: ownerId,
              fileId: rec.id,
            });
            return;
          }
          case PduType.DENY: {
            if (rec.state !== "renew_requested") return;
            store.updateReceived(rec.id, { state: "denied", requestId: "" });
            emit(changed);
            return;
          }
        }
      });
    }
  }

  /** The state of a received file now. */
  verdict(rec: ReceivedFileRecord): AccessVerdict {
    if (rec.deviceTag !== deviceTagOf(this.d.keys.recipient)) {
      return {
        state: FileAccessState.NOT_FOUND,
        reason: "this file's key share is bound to the device that received it; this data " +
          "directory was copied or moved from another device",
      };
    }
    return recipientVerdict(
      rec,
      this.memory.grant(rec.id),
      nowOf(this.d),
      this.memory.askedAt(rec.id),
    );
  }

  /**
   * Asks the owner for S2 when the file is `requested` and no request went out in the last
   * minute (the automatic request after a restart). Returns the state after asking.
   */
  async askIfNeeded(rec: ReceivedFileRecord): Promise<AccessVerdict> {
    const v = this.verdict(rec);
    const now = nowOf(this.d);
    if (v.state !== "requested" || now - this.memory.askedAt(rec.id) < REQUEST_RETRY_SECONDS) {
      return v;
    }
    try {
      await this.#request(rec, "open");
      this.memory.asked(rec.id, now);
    } catch (err) {
      log.warn("cannot ask the owner for access", { error: (err as Error).message });
    }
    return this.verdict(rec);
  }

  async #request(rec: ReceivedFileRecord, reason: "open" | "renew"): Promise<string> {
    const requestId = randomId();
    const pdu = await signPdu({
      v: PDU_VERSION,
      file_uid: rec.fileUid,
      issued_at: nowOf(this.d),
      type: PduType.REQUEST,
      requester: this.d.self.fingerprint,
      reason,
      request_id: requestId,
      received_at: rec.receivedAt,
      ...(rec.forwardPdu === "" ? {} : { forward: rec.forwardPdu }),
    }, this.d.self.privateKey);
    await sendPdus(this.d, rec.ownerContactId, [pdu.encoded]);
    return requestId;
  }

  /**
   * Asks the owner to renew access to an expired (or denied) file: the state becomes
   * `waiting_owner_action` until the owner grants or denies. -1 for a file in another state.
   */
  async requestRenewal(rec: ReceivedFileRecord): Promise<void> {
    const v = this.verdict(rec);
    if (v.state !== "expired" && v.state !== "denied") {
      throw new GatewayError(
        `secure_request_file_access: file ${rec.id} is ${v.state}; a renewal can be asked for ` +
          `an expired or denied file only`,
      );
    }
    const requestId = await this.#request(rec, "renew");
    this.d.ctx.tx.run((emit) => {
      this.d.ctx.store.protectedFiles.updateReceived(rec.id, {
        state: "renew_requested",
        requestId,
      });
      emit({ kind: "PrivittyFileAccessChanged", chatId: rec.chatId, fileId: rec.id });
    });
  }

  /** The key of a file whose state is active: S1 xor S2 (the caller zeroes it after use). */
  contentKey(rec: ReceivedFileRecord): Uint8Array {
    const g = this.memory.grant(rec.id);
    if (g === undefined) throw new PduError("no grant held");
    const s1 = deviceWrap(this.d.keys.recipient, "s1", rec.fileUid, rec.s1);
    const cek = new Uint8Array(32);
    for (let i = 0; i < 32; i++) cek[i] = s1[i] ^ g.s2[i];
    s1.fill(0);
    return cek;
  }
}
