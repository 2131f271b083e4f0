/**
 * The joiner role of SecureJoin (legacy flow, docs/protocol-notes.md §6.2, §8):
 * `join(link)` creates the inviter's contact and the 1:1 chat (or, for a group invite, the group
 * chat without us as a member) at once and sends the plaintext vc-/vg-request (or, when the
 * inviter's key is already known, vc-/vg-request-with-auth directly); vc-/vg-auth-required
 * signed by the invite's fingerprint is answered with the request-with-auth (progress 400);
 * vc-contact-confirm, or the group's vg-member-added naming us, ends it (progress 1000). State
 * lives in the store, so a restart resumes.
 */
import { Chats } from "../core/chats/mod.ts";
import { Contacts } from "../core/contacts/mod.ts";
import { isValidGroupId } from "../core/receive/mod.ts";
import { type CoreContext, type Emit, nowSeconds } from "../core/context.ts";
import type { SelfIdentity } from "../core/contacts/mod.ts";
import type { MailComposer } from "../core/send/mod.ts";
import { type ReadMail, senderKey } from "../core/receive/mod.ts";
import { GatewayError, InvalidParamsError } from "../errors.ts";
import type { GatewayEvent } from "../events/types.ts";
import { logger } from "../log.ts";
import type { JoinerRecord } from "../store/mod.ts";
import { InvalidInviteError, type Invite, parseInvite } from "./invite.ts";
import { ChatType } from "../constants.ts";
import { Header, SecureJoinStep } from "../protocol.ts";
import type { QueueMail } from "./steps.ts";

const log = logger("securejoin");

/** What the joiner needs. */
export interface JoinerDeps {
  readonly ctx: CoreContext;
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  readonly queue: QueueMail;
  /** Called after a join completed (the 1:1 chat): messages that waited for it go out. */
  readonly onJoined?: (chatId: number) => Promise<void>;
}

/** The stored form of a handshake's invite. */
interface StoredInvite {
  fingerprint: string;
  addr: string;
  name: string;
  inviteNumber: string;
  auth: string;
  /** Group and channel invites: the id (`x=`) and name (`g=` / `b=`). */
  groupId?: string;
  groupName?: string;
  /** A channel invite (`b=`). */
  broadcast?: boolean;
}

/** Parses and checks a link for `join`; errors are InvalidParamsError with a clear message. */
export function checkInvite(link: string, self: SelfIdentity): StoredInvite {
  let invite: Invite;
  try {
    invite = parseInvite(link);
  } catch (err) {
    if (err instanceof InvalidInviteError) throw new InvalidParamsError(err.message);
    throw err;
  }
  if (invite.fingerprint === self.fingerprint || invite.addr === self.addr) {
    throw new GatewayError("this is your own invite link: share it with the peer instead");
  }
  if (invite.kind === "fingerprint") {
    throw new InvalidParamsError(
      "not an invite: the link has a fingerprint but no auth token (s=)",
    );
  }
  const groupId = invite.groupId ?? "";
  if (invite.kind !== "contact" && !isValidGroupId(groupId)) {
    throw new InvalidParamsError(`the ${invite.kind} invite has no valid id (x=)`);
  }
  if (invite.inviteNumber === undefined) {
    throw new InvalidParamsError(
      "the invite has no invite number (i=): SecureJoin v3-only links are not supported",
    );
  }
  return {
    fingerprint: invite.fingerprint,
    addr: invite.addr,
    name: invite.name,
    inviteNumber: invite.inviteNumber,
    auth: invite.auth!,
    ...(invite.kind === "group"
      ? { groupId, groupName: invite.groupName || "Group" }
      : invite.kind === "broadcast"
      ? { groupId, groupName: invite.groupName || "Channel", broadcast: true }
      : {}),
  };
}

/** The joiner side of every handshake this account started. */
export class Joiner {
  readonly #contacts: Contacts;
  readonly #chats: Chats;

  constructor(private readonly deps: JoinerDeps) {
    this.#contacts = new Contacts(deps.ctx);
    this.#chats = new Chats(deps.ctx);
  }

  /**
   * Starts joining: returns the 1:1 chat id (a group invite: the group's chat id, self not a
   * member until the inviter's vg-member-added arrives) at once; the handshake runs through the
   * mail queue. Bad links → InvalidParamsError (-32602).
   */
  async join(link: string): Promise<number> {
    const invite = checkInvite(link, this.deps.self);
    const { contactId, chatId, joinerId, key } = this.deps.ctx.tx.run((emit) => {
      let contact = this.#contacts.byFingerprint(invite.fingerprint);
      if (contact === undefined) {
        const id = this.deps.ctx.store.contacts.insert({
          addr: invite.addr,
          authName: invite.name,
          fingerprint: invite.fingerprint,
        });
        emit({ kind: "ContactsChanged", contactId: id });
        contact = this.deps.ctx.store.contacts.get(id)!;
      }
      const chatId = invite.groupId === undefined
        ? this.#chats.getOrCreate1to1(contact.id).chatId
        : this.#groupChat(invite, contact.id, emit);
      const key = contact.publicKey.length > 0 ? contact.publicKey : undefined;
      const joinerId = this.deps.ctx.store.securejoin.addJoiner({
        invite,
        contactId: contact.id,
        chatId,
        step: key ? stepOf(invite, "request-with-auth") : stepOf(invite, "request"),
        createdAt: nowSeconds(this.deps.ctx),
      });
      return { contactId: contact.id, chatId, joinerId, key };
    });
    if (key !== undefined) {
      await this.#sendRequestWithAuth(invite, key);
    } else {
      this.deps.queue(
        this.deps.composer.renderSecureJoinRequest(
          { addr: invite.addr, name: invite.name },
          invite.inviteNumber,
          invite.groupId === undefined ? SecureJoinStep.VC_REQUEST : SecureJoinStep.VG_REQUEST,
        ),
      );
    }
    log.info("joining: first SecureJoin step queued", { joinerId, contactId, chatId });
    return chatId;
  }

  /**
   * The chat of a group or channel invite, created (without us as member) when unknown; a
   * channel's owner is the inviter.
   */
  #groupChat(invite: StoredInvite, inviterId: number, emit: Emit): number {
    const grpid = invite.groupId!; // a group or channel invite has its id (checkInvite)
    const known = this.deps.ctx.store.chats.byGrpid(grpid);
    if (known !== undefined) return known.id;
    const chatId = this.deps.ctx.store.chats.insert({
      type: invite.broadcast ? ChatType.BROADCAST : ChatType.GROUP,
      name: invite.groupName ?? "",
      grpid,
      createdAt: nowSeconds(this.deps.ctx),
      ownerId: invite.broadcast ? inviterId : 0,
    });
    emit({ kind: "MsgsChanged", chatId: 0, msgId: 0 });
    emit({ kind: "ChatModified", chatId });
    return chatId;
  }

  async #sendRequestWithAuth(invite: StoredInvite, key: Uint8Array): Promise<void> {
    const headers: [string, string][] = [
      [Header.SECURE_JOIN_AUTH, invite.auth],
      [Header.SECURE_JOIN_FINGERPRINT, this.deps.self.fingerprint],
    ];
    if (invite.groupId !== undefined && !invite.broadcast) {
      headers.push([Header.SECURE_JOIN_GROUP, invite.groupId]);
    }
    this.deps.queue(
      await this.deps.composer.renderSecureJoinStep(
        { addr: invite.addr, name: invite.name, publicKey: key },
        stepOf(invite, "request-with-auth"),
        headers,
      ),
    );
  }

  /** Ends `joiner`'s handshake: the inviter (`mail`'s signer) stored, verified; progress 1000. */
  #complete(mail: ReadMail, joiner: JoinerRecord): void {
    this.deps.ctx.tx.run((emit) => {
      this.#contacts.upsertPeerFromKey(senderKey(mail));
      this.#contacts.markVerified(joiner.contactId);
      this.deps.ctx.store.securejoin.removeJoiner(joiner.id);
      emit(joinerProgress(joiner, 1000));
    });
  }

  /** The pending handshake whose inviter signed `mail`, or undefined. */
  #pending(mail: ReadMail): { joiner: JoinerRecord; invite: StoredInvite } | undefined {
    const contact = this.#contacts.byFingerprint(mail.signer!);
    if (contact === undefined) return undefined;
    const joiner = this.deps.ctx.store.securejoin.joinersForContact(contact.id)[0];
    if (joiner === undefined) return undefined;
    const invite = joiner.invite as StoredInvite;
    return invite.fingerprint === mail.signer ? { joiner, invite } : undefined;
  }

  /** vc-auth-required from the inviter: store its key, answer with vc-request-with-auth (400). */
  async onAuthRequired(mail: ReadMail): Promise<boolean> {
    const pending = this.#pending(mail);
    if (pending === undefined) {
      log.warn("vc-auth-required without a matching handshake ignored", { from: mail.from.addr });
      return false;
    }
    const { joiner, invite } = pending;
    this.deps.ctx.tx.run(() => {
      this.#contacts.upsertPeerFromKey(senderKey(mail));
      this.deps.ctx.store.securejoin.setJoinerStep(joiner.id, stepOf(invite, "request-with-auth"));
    });
    await this.#sendRequestWithAuth(invite, mail.signerKey!);
    this.deps.ctx.tx.emit(joinerProgress(joiner, 400));
    return true;
  }

  /**
   * vc-contact-confirm from the inviter: the inviter is verified (1000), the handshake ends, and
   * messages that waited for it go out (`onJoined`; a failure there is logged, and they are
   * retried at the next start).
   */
  async onContactConfirm(mail: ReadMail): Promise<boolean> {
    const pending = this.#pending(mail);
    if (pending === undefined || pending.joiner.step !== SecureJoinStep.VC_REQUEST_WITH_AUTH) {
      log.warn("vc-contact-confirm without a matching handshake ignored", {
        from: mail.from.addr,
      });
      return false;
    }
    const { joiner } = pending;
    this.#complete(mail, joiner);
    log.info("inviter verified; handshake done", { contactId: joiner.contactId });
    try {
      await this.deps.onJoined?.(joiner.chatId);
    } catch (err) {
      log.warn("messages waiting for the join could not be sent yet", {
        chatId: joiner.chatId,
        error: err instanceof Error ? err.message : String(err),
      });
    }
    return true;
  }

  /**
   * vg-member-added from the inviter naming us (`Chat-Group-Member-Added`): the group join is
   * done (1000). The mail itself is then applied as the group's message (it makes us a member).
   * Returns false when it ends no handshake of ours (another member's join).
   */
  onMemberAdded(mail: ReadMail): boolean {
    const pending = this.#pending(mail);
    const added = mail.headers.get(Header.CHAT_GROUP_MEMBER_ADDED)?.trim().toLowerCase();
    if (pending === undefined || pending.invite.groupId === undefined) return false;
    if (added !== this.deps.self.addr.toLowerCase()) return false;
    const grpid = mail.headers.get(Header.CHAT_GROUP_ID)?.trim();
    if (grpid !== undefined && grpid !== pending.invite.groupId) return false;
    const { joiner } = pending;
    this.#complete(mail, joiner);
    log.info("added to the group by the inviter; handshake done", { chatId: joiner.chatId });
    return true;
  }
}

/** The vc- or vg- form of a step, by the invite's kind. */
function stepOf(invite: StoredInvite, step: "request" | "request-with-auth") {
  const group = invite.groupId !== undefined;
  if (step === "request") return group ? SecureJoinStep.VG_REQUEST : SecureJoinStep.VC_REQUEST;
  return group ? SecureJoinStep.VG_REQUEST_WITH_AUTH : SecureJoinStep.VC_REQUEST_WITH_AUTH;
}

/** The joiner's progress event for its handshake's contact and chat (1:1 or group). */
function joinerProgress(joiner: JoinerRecord, progress: number): GatewayEvent {
  const invite = joiner.invite as StoredInvite;
  return {
    kind: "SecurejoinJoinerProgress",
    contactId: joiner.contactId,
    chatType: invite.broadcast
      ? ChatType.BROADCAST
      : invite.groupId !== undefined
      ? ChatType.GROUP
      : ChatType.SINGLE,
    chatId: joiner.chatId,
    progress,
  };
}
