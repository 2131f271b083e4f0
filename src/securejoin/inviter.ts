/**
 * The inviter role of SecureJoin (legacy flow, protocols.md §7.2): makes invite links, answers a
 * plaintext vc-request with vc-auth-required, and verifies vc-request-with-auth (signed by the
 * fingerprint it names, known unused auth token) before marking the joiner verified, creating
 * the 1:1 chat and sending vc-contact-confirm. A joiner that skips to vc-request-with-auth works.
 */
import { Chats } from "../core/chats.ts";
import { Contacts } from "../core/contacts.ts";
import { type CoreContext, nowSeconds } from "../core/context.ts";
import type { SelfIdentity } from "../core/identity.ts";
import type { MailComposer } from "../core/mail_composer.ts";
import { type ReadMail, senderKey } from "../core/mail_reader.ts";
import { logger } from "../log.ts";
import { newToken } from "../crypto/random.ts";
import { formatInvite } from "./invite.ts";
import { ChatType } from "../constants.ts";
import { Header, SecureJoinStep } from "../protocol.ts";
import { type QueueMail, VERIFICATION_TIMEOUT_SECONDS } from "./steps.ts";

const log = logger("securejoin");

/** What the inviter needs. */
export interface InviterDeps {
  readonly ctx: CoreContext;
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  readonly queue: QueueMail;
}

/** The inviter side of every 1:1 invite this account made. */
export class Inviter {
  constructor(private readonly deps: InviterDeps) {}

  /**
   * A new 1:1 invite link: the account's invite number (made once, then reused) and a new auth
   * token, both stored before the link is returned.
   */
  createInvite(): string {
    const store = this.deps.ctx.store.securejoin;
    return this.deps.ctx.tx.run(() => {
      let inviteNumber = store.tokens("invite", 0)[0]?.token;
      if (inviteNumber === undefined) {
        inviteNumber = newToken();
        store.addToken("invite", inviteNumber, 0);
      }
      const auth = newToken();
      store.addToken("auth", auth, 0);
      return formatInvite({
        fingerprint: this.deps.self.fingerprint,
        addr: this.deps.self.addr,
        name: this.deps.self.name,
        inviteNumber,
        auth,
      });
    });
  }

  /** Step 1 → 2: a plaintext vc-request with a known invite number gets vc-auth-required. */
  async onRequest(mail: ReadMail): Promise<void> {
    const number = mail.headers.get(Header.SECURE_JOIN_INVITENUMBER)?.trim() ?? "";
    if (this.deps.ctx.store.securejoin.findToken("invite", number) === undefined) {
      log.warn("vc-request with an unknown invite number ignored", { from: mail.from.addr });
      return;
    }
    if (mail.autocrypt === undefined) {
      log.warn("vc-request without a usable Autocrypt key ignored", { from: mail.from.addr });
      return;
    }
    const to = { addr: mail.from.addr, publicKey: mail.autocrypt.keydata };
    this.deps.queue(
      await this.deps.composer.renderSecureJoinStep(to, SecureJoinStep.VC_AUTH_REQUIRED),
    );
    log.info("vc-request answered with vc-auth-required", { from: mail.from.addr });
  }

  /**
   * Step 3 → 4: checks vc-request-with-auth and, when it holds, verifies the joiner. Returns
   * true when the contact was verified. Refusals are logged with the reason, never verified.
   */
  async onRequestWithAuth(mail: ReadMail): Promise<boolean> {
    const refuse = (reason: string) => {
      log.warn(`vc-request-with-auth refused: ${reason}`, { from: mail.from.addr });
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
    if (token === undefined || token.chatId !== 0) {
      return refuse("unknown or already used auth token");
    }
    if (nowSeconds(this.deps.ctx) - token.createdAt > VERIFICATION_TIMEOUT_SECONDS) {
      store.removeToken(auth);
      return refuse("the auth token is older than 7 days");
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
}
