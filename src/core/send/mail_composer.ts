/**
 * Turns what the gateway wants to say into finished mails: the inner MIME (mime/factory.ts),
 * encrypted to the recipients and self, signed, armored and wrapped in the envelope chatmail
 * relays accept. Chat messages ask for read receipts (Chat-Disposition-Notification-To) and for
 * the gateways' automatic delivery receipt (`Edge-Delivery-Receipt-To`, ignored by Delta Chat).
 */
import { encryptForChannel } from "../../crypto/channel_pgp.ts";
import { encryptAndSign } from "../../crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../mime/encrypted_envelope.ts";
import {
  encodeWord,
  type Mailbox,
  renderChatMessage,
  renderReadReceipt,
  renderSecureJoinRequest,
  renderSecureJoinStep,
} from "../../mime/factory.ts";
import { Capability, Header, type SecureJoinStep } from "../../protocol.ts";
import { newToken } from "../../crypto/random.ts";
import type { ChatRecord, ContactRecord } from "../../store/mod.ts";
import { type ChatControl, EDITED_PREFIX } from "../chats/control.ts";
import { escapeFooterMarks } from "../receive/text.ts";
import { channelHeaders } from "../channels/mail.ts";
import { groupHeaders } from "../groups/mail.ts";
import type { SelfIdentity } from "../contacts/identity.ts";
import type { OutgoingDraft, RenderedMail } from "../chats/messages.ts";
import type { PeerKeyCache } from "../contacts/peer_keys.ts";

/**
 * What this gateway can receive, inside the encrypted part of every mail it signs (Delta Chat
 * ignores it; docs/transfer.md#capability).
 */
const CAPABILITIES: [string, string] = [Header.EDGE_CAPABILITIES, Capability.LARGE_FILES];

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
  return seconds > 0 ? [[Header.EPHEMERAL_TIMER, String(seconds)]] : [];
}

/** The text and headers of a control mail. */
function controlParts(c: ChatControl): [string, [string, string][]] {
  switch (c.kind) {
    case "reaction":
      return [c.reaction, [
        [Header.CONTENT_DISPOSITION, "reaction"],
        [Header.IN_REPLY_TO, `<${c.target}>`],
        [Header.REFERENCES, `<${c.target}>`],
      ]];
    case "edit":
      return [EDITED_PREFIX + escapeFooterMarks(c.text), [[Header.CHAT_EDIT, `<${c.target}>`]]];
    case "delete":
      return ["🚮", [[Header.CHAT_DELETE, c.targets.map((id) => `<${id}>`).join(" ")]]];
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
    const { addr, name } = this.self;
    return name === "" ? { addr } : { addr, name };
  }

  /**
   * Encrypts `inner` to `to` and self (or, with `secret`, symmetrically with a channel's secret
   * for every `to`), signs it and wraps it in the relay-conforming envelope.
   */
  async seal(
    inner: Uint8Array,
    to: readonly KeyedRecipient[],
    messageId: string,
    subject?: string,
    secret?: string,
  ): Promise<RenderedMail> {
    const ciphertext = secret !== undefined
      ? await encryptForChannel({ plaintext: inner, secret, signingKey: this.self.privateKey })
      : await encryptAndSign({
        plaintext: inner,
        recipients: await Promise.all(to.map((r) => this.keys.get(r.publicKey))),
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
      ...(subject === undefined ? {} : { subject }),
    };
  }

  /**
   * Renders a chat message (text and optional file) for `send_msg`; see `RenderFn`. A group
   * message (`draft.group`) lists every member in the inner `To` with the group headers, gossips
   * the recipients' keys when the plan says so, and has the group name as Subject; a group
   * system message asks for no receipts.
   */
  async renderChat(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
  ): Promise<RenderedMail> {
    const messageId = this.newMessageId();
    const { group, channel } = draft;
    const named = group ?? channel;
    const subject = named === undefined
      ? `Message from ${this.self.name || this.self.addr}`
      : `${draft.inReplyTo !== "" ? "Re: " : ""}${named.name}`;
    const system = group?.change !== undefined || channel?.change !== undefined;
    const extra: [string, string][] = system ? [] : [
      [Header.CHAT_DISPOSITION_NOTIFICATION_TO, this.self.addr],
      ...(channel === undefined
        ? [[Header.EDGE_DELIVERY_RECEIPT_TO, this.self.addr] as [string, string]]
        : []),
    ];
    if (group !== undefined) extra.push(...groupHeaders(group, encodeWord));
    if (channel !== undefined) extra.push(...channelHeaders(channel, encodeWord));
    const post = channel !== undefined && channel.change === undefined;
    if (draft.inReplyTo !== "") {
      extra.push(
        [Header.IN_REPLY_TO, `<${draft.inReplyTo}>`],
        [Header.REFERENCES, `<${draft.inReplyTo}>`],
      );
    }
    extra.push(
      ...timerHeader(chat.ephemeralTimer),
      CAPABILITIES,
      ...(draft.extraHeaders ?? []),
    );
    const file = draft.file && {
      name: draft.file.name,
      mime: draft.file.mime || "application/octet-stream",
      bytes: await Deno.readFile(draft.file.path),
    };
    const to = recipients.map(recipientOf);
    // Delta Chat takes gossip only for addresses in the inner To (not a removed member).
    const gossip = group?.gossip
      ? to.filter((r) => group.to.some((m) => m.addr === r.addr))
        .map((r) => ({ addr: r.addr, keydata: r.publicKey }))
      : channel?.change?.kind === "member-added"
      ? to.map((r) => ({ addr: r.addr, keydata: r.publicKey }))
      : undefined;
    const inner = renderChatMessage({
      from: this.#from(),
      to: group === undefined ? to : group.to.map((m) => ({ addr: m.addr, name: m.name })),
      hiddenRecipients: post,
      messageId: `<${messageId}>`,
      date: new Date(draft.timestamp * 1000),
      subject,
      autocryptKey: this.self.publicKey,
      ...(gossip === undefined ? {} : { gossip }),
      extra,
      text: withQuote(draft.quote, escapeFooterMarks(draft.text)),
      ...(file === undefined ? {} : { file }),
    });
    return await this.seal(inner, to, messageId, subject, post ? channel.secret : undefined);
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
      extra: [...extra, ...timerHeader(ephemeralTimer), CAPABILITIES],
      text,
    });
    return await this.seal(inner, to, messageId);
  }

  /**
   * A hidden mail carrying protected-file PDUs only (request, grant, revoke, deny), in
   * `Header.EDGE_PRV_PDU` headers (already folded) inside the encrypted part. It has the shape of a
   * delivery receipt (MDN) for a Message-ID that names no message, because that is what Delta
   * Chat files away unseen ("Message is an MDN", trash): a Delta Chat peer shows nothing, where an
   * empty chat message would show as an empty bubble. Gateways read the PDUs first.
   */
  async renderPdus(to: KeyedRecipient, pdus: readonly string[]): Promise<RenderedMail> {
    return await this.renderReceipt(to, [this.newMessageId()], "processed", pdus);
  }

  /**
   * A receipt for messages of one sender: read (`displayed`) or stored (`processed`); `pdus` go
   * into it as `Edge-Prv-Pdu` headers (see renderPdus).
   */
  async renderReceipt(
    to: KeyedRecipient,
    originalMessageIds: readonly string[],
    disposition: "displayed" | "processed",
    pdus: readonly string[] = [],
  ): Promise<RenderedMail> {
    const messageId = this.newMessageId();
    const inner = renderReadReceipt({
      from: this.#from(),
      to: [to],
      messageId: `<${messageId}>`,
      date: new Date(),
      subject: "Receipt Notification",
      autocryptKey: this.self.publicKey,
      extra: [CAPABILITIES, ...pdus.map((p): [string, string] => [Header.EDGE_PRV_PDU, p])],
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
    step: SecureJoinStep,
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
      headers: [...headers, CAPABILITIES],
    });
    return await this.seal(inner, [to], messageId);
  }

  /** The joiner's plaintext `vc-request` (1:1) or `vg-request` (group) to the inviter at `to`. */
  renderSecureJoinRequest(
    to: Mailbox,
    inviteNumber: string,
    step: "vc-request" | "vg-request",
  ): RenderedMail {
    const messageId = this.newMessageId();
    const raw = renderSecureJoinRequest({
      from: this.self.addr,
      to,
      messageId: `<${messageId}>`,
      date: new Date(),
      step,
      inviteNumber,
      autocryptKey: this.self.publicKey,
    });
    return { raw, rfc724Mid: messageId, envelopeFrom: this.self.addr, recipients: [to.addr] };
  }
}
