/**
 * The inviter role of SecureJoin (legacy flow, docs/protocol-notes.md §6.2): makes invite links,
 * answers a plaintext vc-request with vc-auth-required, and verifies vc-request-with-auth (signed
 * by the fingerprint it names, known unused auth token) before marking the joiner verified,
 * creating the 1:1 chat and sending vc-contact-confirm. A joiner that skips to vc-request-with-auth
 * works.
 */
import { Chats } from "../core/chats/mod.ts";
import { Contacts } from "../core/contacts/mod.ts";
import { type CoreContext, nowSeconds } from "../core/context.ts";
import type { SelfIdentity } from "../core/contacts/mod.ts";
import type { MailComposer } from "../core/send/mod.ts";
import type { SendSteps } from "../core/send/mod.ts";
import { type ReadMail, senderKey } from "../core/receive/mod.ts";
import { logger } from "../log.ts";
import { newToken } from "../crypto/random.ts";
import { formatInvite } from "./invite.ts";
import { ChatType, ContactId } from "../constants.ts";
import { Channels } from "../core/channels/mod.ts";
import { GroupMembers } from "../core/groups/mod.ts";
import { Groups } from "../core/groups/mod.ts";
import { GatewayError } from "../errors.ts";
import { Header, SecureJoinStep } from "../protocol.ts";
import { type QueueMail, VERIFICATION_TIMEOUT_SECONDS } from "./steps.ts";

const log = logger("securejoin");

/** What the inviter needs. */
export interface InviterDeps {
  readonly ctx: CoreContext;
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  /** The account's send steps: group and channel messages go out the way every message does. */
  readonly send: SendSteps;
  readonly queue: QueueMail;
}

/** The inviter side of every 1:1 and group invite this account made. */
export class Inviter {
  constructor(private readonly deps: InviterDeps) {}

  /**
   * A new invite link: to a 1:1 chat (`chatId` 0), or to join a group we are a member of. The
   * invite number is made once per target and reused; the auth token is new. Both are stored
   * before the link is returned. A chat that is no such group → -1.
   */
  createInvite(chatId = 0): string {
    const store = this.deps.ctx.store.securejoin;
    const target = chatId === 0 ? undefined : new Chats(this.deps.ctx).require(chatId);
    const channel = target?.type === ChatType.BROADCAST ? target : undefined;
    const group = target === undefined || channel !== undefined
      ? undefined
      : this.#groups().requireGroup(chatId);
    if (group !== undefined && !new GroupMembers(this.deps.ctx).isMember(chatId, ContactId.SELF)) {
      throw new GatewayError(`cannot invite to group chat ${chatId}: you are not a member`);
    }
    if (channel !== undefined && channel.ownerId !== ContactId.SELF) {
      throw new GatewayError(`cannot invite to channel ${chatId}: only its owner can`);
    }
    return this.deps.ctx.tx.run(() => {
      let inviteNumber = store.tokens("invite", chatId)[0]?.token;
      if (inviteNumber === undefined) {
        inviteNumber = newToken();
        store.addToken("invite", inviteNumber, chatId);
      }
      const auth = newToken();
      store.addToken("auth", auth, chatId);
      return formatInvite({
        fingerprint: this.deps.self.fingerprint,
        addr: this.deps.self.addr,
        name: this.deps.self.name,
        inviteNumber,
        auth,
        ...(group === undefined ? {} : { group: { id: group.grpid, name: group.name } }),
        ...(channel === undefined ? {} : { broadcast: { id: channel.grpid, name: channel.name } }),
      });
    });
  }

  #groups(): Groups {
    return new Groups(this.deps.ctx, this.deps.send);
  }

  /**
   * Step 1 → 2: a plaintext vc-/vg-request with a known invite number gets vc-/vg-auth-required
   * (the prefix copied from the request, as Delta Chat).
   */
  async onRequest(mail: ReadMail, step: "vc-request" | "vg-request"): Promise<void> {
    const number = mail.headers.get(Header.SECURE_JOIN_INVITENUMBER)?.trim() ?? "";
    if (this.deps.ctx.store.securejoin.findToken("invite", number) === undefined) {
      log.warn(`${step} with an unknown invite number ignored`, { from: mail.from.addr });
      return;
    }
    if (mail.autocrypt === undefined) {
      log.warn(`${step} without a usable Autocrypt key ignored`, { from: mail.from.addr });
      return;
    }
    const to = { addr: mail.from.addr, publicKey: mail.autocrypt.keydata };
    const reply = step === SecureJoinStep.VG_REQUEST
      ? SecureJoinStep.VG_AUTH_REQUIRED
      : SecureJoinStep.VC_AUTH_REQUIRED;
    this.deps.queue(await this.deps.composer.renderSecureJoinStep(to, reply));
    log.info(`${step} answered with ${reply}`, { from: mail.from.addr });
  }

  /**
   * Step 3 → 4: checks vc-/vg-request-with-auth and, when it holds, verifies the joiner: for a
   * 1:1 invite it gets vc-contact-confirm, for a group invite (the group comes from the auth
   * token, not the request) it is added and every member gets the vg-member-added message.
   * Returns true when the contact was verified. Refusals are logged with the reason.
   */
  async onRequestWithAuth(
    mail: ReadMail,
    step: "vc-request-with-auth" | "vg-request-with-auth",
  ): Promise<boolean> {
    const refuse = (reason: string) => {
      log.warn(`${step} refused: ${reason}`, { from: mail.from.addr });
      this.deps.ctx.tx.emit({ kind: "Warning", msg: `SecureJoin request refused: ${reason}` });
      return false;
    };
    const fpr = (mail.headers.get(Header.SECURE_JOIN_FINGERPRINT) ?? "").replace(/\s/g, "")
      .toUpperCase();
    if (fpr === "" || fpr !== mail.signer) {
      return refuse("Secure-Join-Fingerprint does not match the signing key");
    }
    const auth = mail.headers.get(Header.SECURE_JOIN_AUTH)?.trim() ?? "";
    const store = this.deps.ctx.store.securejoin;
    const token = store.findToken("auth", auth);
    if (token === undefined) return refuse("unknown or already used auth token");
    if (nowSeconds(this.deps.ctx) - token.createdAt > VERIFICATION_TIMEOUT_SECONDS) {
      store.removeToken(auth);
      return refuse("the auth token is older than 7 days");
    }
    if (token.chatId !== 0) return await this.#joinGroup(mail, token.chatId);
    if (step !== SecureJoinStep.VC_REQUEST_WITH_AUTH) {
      return refuse("a group request with the auth token of a 1:1 invite");
    }
    const contacts = new Contacts(this.deps.ctx);
    const chats = new Chats(this.deps.ctx);
    const { contactId, chatId } = this.deps.ctx.tx.run(() => {
      store.removeToken(auth); // one use: a replayed request cannot verify another key
      const { id } = contacts.upsertPeerFromKey(senderKey(mail));
      contacts.markVerified(id);
      return { contactId: id, chatId: chats.getOrCreate1to1(id).chatId };
    });
    const to = { addr: mail.from.addr, publicKey: mail.signerKey! };
    this.deps.queue(
      await this.deps.composer.renderSecureJoinStep(to, SecureJoinStep.VC_CONTACT_CONFIRM),
    );
    this.deps.ctx.tx.emit({
      kind: "SecurejoinInviterProgress",
      contactId,
      chatType: ChatType.SINGLE,
      chatId,
      progress: 1000,
    });
    log.info("joiner verified; vc-contact-confirm queued", { contactId, chatId });
    return true;
  }

  /**
   * A verified group join: the joiner becomes a member and every member (the joiner included)
   * gets the member-added message with `Secure-Join: vg-member-added` and every member's key.
   * Group auth tokens stay valid (a group invite may be shared with several people).
   */
  async #joinGroup(mail: ReadMail, chatId: number): Promise<boolean> {
    const contacts = new Contacts(this.deps.ctx);
    const contactId = this.deps.ctx.tx.run(() => {
      const { id } = contacts.upsertPeerFromKey(senderKey(mail));
      contacts.markVerified(id);
      return id;
    });
    const channel = this.deps.ctx.store.chats.get(chatId)?.type === ChatType.BROADCAST;
    if (channel) {
      await new Channels(this.deps.ctx, this.deps.send)
        .addSubscriber(chatId, contactId);
    } else await this.#groups().addMember(chatId, contactId, true);
    this.deps.ctx.tx.emit({
      kind: "SecurejoinInviterProgress",
      contactId,
      chatType: channel ? ChatType.BROADCAST : ChatType.GROUP,
      chatId,
      progress: 1000,
    });
    log.info("joiner verified and added to the group; vg-member-added queued", {
      contactId,
      chatId,
    });
    return true;
  }
}
