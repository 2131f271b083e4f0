/**
 * The joiner role of SecureJoin (legacy flow, protocols.md §7.2): `join(link)` creates the
 * inviter's contact and 1:1 chat at once and sends the plaintext vc-request (or, when the
 * inviter's key is already known, vc-request-with-auth directly); vc-auth-required signed by the
 * invite's fingerprint is answered with vc-request-with-auth (progress 400); vc-contact-confirm
 * marks the inviter verified (progress 1000). State lives in the store, so a restart resumes.
 */
import { Chats } from "../core/chats.ts";
import { Contacts } from "../core/contacts.ts";
import type { CoreContext } from "../core/context.ts";
import type { SelfIdentity } from "../core/identity.ts";
import type { MailComposer } from "../core/mail_composer.ts";
import { type ReadMail, senderKey } from "../core/mail_reader.ts";
import { GatewayError, InvalidParamsError } from "../errors.ts";
import type { GatewayEvent } from "../events/types.ts";
import { logger } from "../log.ts";
import type { JoinerRecord } from "../store/mod.ts";
import { InvalidInviteError, type Invite, parseInvite } from "./invite.ts";
import { type QueueMail, SINGLE_CHAT_TYPE, Step } from "./steps.ts";

const log = logger("securejoin");

/** What the joiner needs. */
export interface JoinerDeps {
  readonly ctx: CoreContext;
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  readonly queue: QueueMail;
}

/** The stored form of a handshake's invite. */
interface StoredInvite {
  fingerprint: string;
  addr: string;
  name: string;
  inviteNumber: string;
  auth: string;
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
  if (invite.kind !== "contact") {
    throw new InvalidParamsError(`${invite.kind} invites are not supported; use a 1:1 invite link`);
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
   * Starts joining: returns the 1:1 chat id at once; the handshake runs through the mail queue.
   * Bad links → InvalidParamsError (-32602).
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
      const { chatId } = this.#chats.getOrCreate1to1(contact.id);
      const key = contact.publicKey.length > 0 ? contact.publicKey : undefined;
      const joinerId = this.deps.ctx.store.securejoin.addJoiner({
        invite,
        contactId: contact.id,
        chatId,
        step: key ? Step.REQUEST_WITH_AUTH : Step.REQUEST,
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
        ),
      );
    }
    log.info("joining: first SecureJoin step queued", { joinerId, contactId, chatId });
    return chatId;
  }

  async #sendRequestWithAuth(invite: StoredInvite, key: Uint8Array): Promise<void> {
    this.deps.queue(
      await this.deps.composer.renderSecureJoinStep(
        { addr: invite.addr, name: invite.name, publicKey: key },
        Step.REQUEST_WITH_AUTH,
        [["Secure-Join-Auth", invite.auth], [
          "Secure-Join-Fingerprint",
          this.deps.self.fingerprint,
        ]],
      ),
    );
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
      this.deps.ctx.store.securejoin.setJoinerStep(joiner.id, Step.REQUEST_WITH_AUTH);
    });
    await this.#sendRequestWithAuth(invite, mail.signerKey!);
    this.deps.ctx.tx.emit(joinerProgress(joiner, 400));
    return true;
  }

  /** vc-contact-confirm from the inviter: the inviter is verified (1000), the handshake ends. */
  onContactConfirm(mail: ReadMail): boolean {
    const pending = this.#pending(mail);
    if (pending === undefined || pending.joiner.step !== Step.REQUEST_WITH_AUTH) {
      log.warn("vc-contact-confirm without a matching handshake ignored", {
        from: mail.from.addr,
      });
      return false;
    }
    const { joiner } = pending;
    this.deps.ctx.tx.run((emit) => {
      this.#contacts.upsertPeerFromKey(senderKey(mail));
      this.#contacts.markVerified(joiner.contactId);
      this.deps.ctx.store.securejoin.removeJoiner(joiner.id);
      emit(joinerProgress(joiner, 1000));
    });
    log.info("inviter verified; handshake done", { contactId: joiner.contactId });
    return true;
  }
}

/** The joiner's progress event for its handshake's contact and 1:1 chat. */
function joinerProgress(joiner: JoinerRecord, progress: number): GatewayEvent {
  return {
    kind: "SecurejoinJoinerProgress",
    contactId: joiner.contactId,
    chatType: SINGLE_CHAT_TYPE,
    chatId: joiner.chatId,
    progress,
  };
}
