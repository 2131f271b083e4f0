/**
 * Turns what the gateway wants to say into finished mails: the inner MIME (mime/factory.ts),
 * encrypted to the recipients and self, signed, armored and wrapped in the envelope chatmail
 * relays accept. Chat messages ask for read receipts (Chat-Disposition-Notification-To) and for
 * the gateways' automatic delivery receipt (`Edge-Delivery-Receipt-To`, ignored by Delta Chat).
 */
import { encryptAndSign } from "../crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../mime/encrypted_envelope.ts";
import {
  type Mailbox,
  renderChatMessage,
  renderReadReceipt,
  renderSecureJoinRequest,
  renderSecureJoinStep,
} from "../mime/factory.ts";
import { newToken } from "../securejoin/invite.ts";
import type { ChatRecord, ContactRecord } from "../store/mod.ts";
import { type ChatControl, EDITED_PREFIX } from "./chat_control.ts";
import { escapeFooterMarks } from "./chat_text.ts";
import type { SelfIdentity } from "./identity.ts";
import type { OutgoingDraft, RenderedMail } from "./messages.ts";
import type { PeerKeyCache } from "./peer_keys.ts";

/** Header a gateway sets to ask a peer gateway for an automatic delivery receipt. */
export const DELIVERY_RECEIPT_HEADER = "Edge-Delivery-Receipt-To";

/**
 * Header (inside the encrypted part, may repeat) carrying one signed protected-file PDU
 * (docs/prv-format.md): with a `.prv` on its chat message, or alone on a hidden PDU mail.
 */
export const PRV_PDU_HEADER = "Edge-Prv-Pdu";

/** A recipient with the key its mail is encrypted to. */
export interface KeyedRecipient {
  readonly addr: string;
  readonly name?: string;
  /** Binary transferable public key. */
  readonly publicKey: Uint8Array;
}

export function recipientOf(c: ContactRecord): KeyedRecipient {
  return { addr: c.addr, name: c.name || c.authName, publicKey: c.publicKey };
}

/** `text` below `quote` as `> ` lines and an empty line, as Delta Chat sends a reply's quote. */
export function withQuote(quote: string, text: string): string {
  if (quote === "") return text;
  const lines = quote.replace(/\r\n/g, "\n").split("\n").map((l) => `> ${l}`.trimEnd());
  return `${lines.join("\n")}\n\n${text}`;
}

/**
 * `Ephemeral-Timer` for a chat whose peer turned disappearing messages on: Delta Chat reads a
 * mail without it as "timer off" and would turn the peer's setting off (receive_imf.rs).
 */
function timerHeader(seconds: number): [string, string][] {
  return seconds > 0 ? [["Ephemeral-Timer", String(seconds)]] : [];
}

/** The text and headers of a control mail. */
function controlParts(c: ChatControl): [string, [string, string][]] {
  switch (c.kind) {
    case "reaction":
      return [c.reaction, [
        ["Content-Disposition", "reaction"],
        ["In-Reply-To", `<${c.target}>`],
        ["References", `<${c.target}>`],
      ]];
    case "edit":
      return [EDITED_PREFIX + escapeFooterMarks(c.text), [["Chat-Edit", `<${c.target}>`]]];
    case "delete":
      return ["🚮", [["Chat-Delete", c.targets.map((id) => `<${id}>`).join(" ")]]];
  }
}

/** Builds the mails of one account. */
export class MailComposer {
  constructor(
    private readonly self: SelfIdentity,
    private readonly keys: PeerKeyCache,
  ) {}

  /** A new Message-ID (no angle brackets) in the account's domain. */
  newMessageId(): string {
    const domain = this.self.addr.slice(this.self.addr.lastIndexOf("@") + 1) || "localhost";
    return `${newToken()}@${domain}`;
  }

  #from(): Mailbox {
    return { addr: this.self.addr, name: this.self.name || undefined };
  }

  /** Encrypts `inner` to `to` and self, signs it and wraps it in the relay-conforming envelope. */
  async seal(
    inner: Uint8Array,
    to: readonly KeyedRecipient[],
    messageId: string,
    subject?: string,
  ): Promise<RenderedMail> {
    const recipients = await Promise.all(to.map((r) => this.keys.get(r.publicKey)));
    const ciphertext = await encryptAndSign({
      plaintext: inner,
      recipients,
      signingKey: this.self.privateKey,
    });
    const raw = renderEncryptedEnvelope({
      from: this.self.addr,
      messageId: `<${messageId}>`,
      date: new Date(),
      ciphertext,
      boundary: newToken(),
    });
    return {
      raw,
      rfc724Mid: messageId,
      envelopeFrom: this.self.addr,
      recipients: to.map((r) => r.addr),
      subject,
    };
  }

  /** Renders a chat message (text and optional file) for `send_msg`; see `RenderFn`. */
  async renderChat(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
  ): Promise<RenderedMail> {
    const messageId = this.newMessageId();
    const subject = `Message from ${this.self.name || this.self.addr}`;
    const extra: [string, string][] = [
      ["Chat-Disposition-Notification-To", this.self.addr],
      [DELIVERY_RECEIPT_HEADER, this.self.addr],
    ];
    if (draft.inReplyTo !== "") {
      extra.push(["In-Reply-To", `<${draft.inReplyTo}>`], ["References", `<${draft.inReplyTo}>`]);
    }
    extra.push(...timerHeader(chat.ephemeralTimer), ...(draft.extraHeaders ?? []));
    const file = draft.file && {
      name: draft.file.name,
      mime: draft.file.mime || "application/octet-stream",
      bytes: await Deno.readFile(draft.file.path),
    };
    const to = recipients.map(recipientOf);
    const inner = renderChatMessage({
      from: this.#from(),
      to,
      messageId: `<${messageId}>`,
      date: new Date(draft.timestamp * 1000),
      subject,
      autocryptKey: this.self.publicKey,
      extra,
      text: withQuote(draft.quote, escapeFooterMarks(draft.text)),
      file,
    });
    return await this.seal(inner, to, messageId, subject);
  }

  /**
   * A mail that acts on earlier messages, as Delta Chat sends it (the same `ChatControl` the
   * receiving side parses): a reaction (RFC 9078: a text part `Content-Disposition: reaction`
   * whose body is the emoji, '' removing ours, aimed by `In-Reply-To`), an edit (`Chat-Edit`,
   * text with the ✏️ prefix) or a delete request (`Chat-Delete`, text 🚮). `ephemeralTimer`: the
   * chat's, echoed (see `timerHeader`).
   */
  async renderControl(
    control: ChatControl,
    recipients: readonly ContactRecord[],
    ephemeralTimer: number,
  ): Promise<RenderedMail> {
    const [text, extra] = controlParts(control);
    const messageId = this.newMessageId();
    const to = recipients.map(recipientOf);
    const inner = renderChatMessage({
      from: this.#from(),
      to,
      messageId: `<${messageId}>`,
      date: new Date(),
      subject: `Message from ${this.self.name || this.self.addr}`,
      autocryptKey: this.self.publicKey,
      extra: [...extra, ...timerHeader(ephemeralTimer)],
      text,
    });
    return await this.seal(inner, to, messageId);
  }

  /**
   * A hidden mail carrying protected-file PDUs only (request, grant, revoke, deny), in
   * `PRV_PDU_HEADER` headers (already folded) inside the encrypted part. It has the shape of a
   * delivery receipt (MDN) for a Message-ID that names no message, because that is what Delta
   * Chat files away unseen ("Message is an MDN", trash): a Delta Chat peer shows nothing, where an
   * empty chat message would show as an empty bubble. Gateways read the PDUs first.
   */
  async renderPdus(to: KeyedRecipient, pdus: readonly string[]): Promise<RenderedMail> {
    const messageId = this.newMessageId();
    const inner = renderReadReceipt({
      from: this.#from(),
      to: [to],
      messageId: `<${messageId}>`,
      date: new Date(),
      subject: "Receipt Notification",
      autocryptKey: this.self.publicKey,
      extra: pdus.map((p): [string, string] => [PRV_PDU_HEADER, p]),
      originalMessageIds: [`<${this.newMessageId()}>`],
      disposition: "processed",
    });
    return await this.seal(inner, [to], messageId);
  }

  /** A receipt for messages of one sender: read (`displayed`) or stored (`processed`). */
  async renderReceipt(
    to: KeyedRecipient,
    originalMessageIds: readonly string[],
    disposition: "displayed" | "processed",
  ): Promise<RenderedMail> {
    const messageId = this.newMessageId();
    const inner = renderReadReceipt({
      from: this.#from(),
      to: [to],
      messageId: `<${messageId}>`,
      date: new Date(),
      subject: "Receipt Notification",
      autocryptKey: this.self.publicKey,
      originalMessageIds: originalMessageIds.map((id) => `<${id}>`),
      disposition,
    });
    return await this.seal(inner, [to], messageId);
  }

  /**
   * An encrypted SecureJoin step with `Autocrypt-Gossip` of the receiver's own key (Delta Chat
   * ignores every step after the request without it).
   */
  async renderSecureJoinStep(
    to: KeyedRecipient,
    step: string,
    headers: readonly [string, string][] = [],
  ): Promise<RenderedMail> {
    const messageId = this.newMessageId();
    const inner = renderSecureJoinStep({
      from: this.#from(),
      to: [to],
      messageId: `<${messageId}>`,
      date: new Date(),
      subject: "Secure-Join",
      autocryptKey: this.self.publicKey,
      gossip: [{ addr: to.addr, keydata: to.publicKey }],
      step,
      headers,
    });
    return await this.seal(inner, [to], messageId);
  }

  /** The joiner's plaintext `vc-request` to the inviter at `to`. */
  renderSecureJoinRequest(to: Mailbox, inviteNumber: string): RenderedMail {
    const messageId = this.newMessageId();
    const raw = renderSecureJoinRequest({
      from: this.self.addr,
      to,
      messageId: `<${messageId}>`,
      date: new Date(),
      step: "vc-request",
      inviteNumber,
      autocryptKey: this.self.publicKey,
    });
    return { raw, rfc724Mid: messageId, envelopeFrom: this.self.addr, recipients: [to.addr] };
  }
}
