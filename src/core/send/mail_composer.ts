/**
 * Turns what the gateway wants to say into finished mails: the inner MIME (mime/factory.ts),
 * encrypted to the recipients and self, signed, armored and wrapped in the envelope chatmail
 * relays accept. Chat messages ask for read receipts (Chat-Disposition-Notification-To) and for
 * the gateways' automatic delivery receipt (`Edge-Delivery-Receipt-To`, ignored by Delta Chat).
 * A large file is streamed into the spool rather than held in memory; any mail's size can be
 * bounded beforehand from its file's size alone (`chatSizer`).
 */
import { encryptForChannel } from "../../crypto/channel_pgp.ts";
import { armorChunks, armoredLength } from "../../crypto/armor.ts";
import { base64LineChunks } from "../../crypto/base64_lines.ts";
import { encryptAndSign, encryptedLengthBound } from "../../crypto/pgp.ts";
import { encryptAndSignStream, type PlaintextSource } from "../../crypto/pgp_stream.ts";
import { SPOOL_FROM_FILE_BYTES } from "../../constants.ts";
import {
  encryptedEnvelopeLength,
  type EnvelopeInput,
  renderEncryptedEnvelope,
  renderEncryptedEnvelopeAround,
} from "../../mime/encrypted_envelope.ts";
import {
  base64LinesLength,
  encodeWord,
  type InnerBase,
  type Mailbox,
  renderChatMessage,
  renderChatMessageAround,
  renderReadReceipt,
  renderSecureJoinRequest,
  renderSecureJoinStep,
} from "../../mime/factory.ts";
import { Capability, Header, type SecureJoinStep } from "../../protocol.ts";
import { newToken } from "../../crypto/random.ts";
import type { ChatRecord, ContactRecord, MailSpool } from "../../store/mod.ts";
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

/** A chat message's inner MIME (its file's content aside) and what sealing it needs. */
interface ChatInner {
  readonly message: InnerBase & {
    readonly text: string;
    readonly file?: { readonly name: string; readonly mime: string };
  };
  readonly to: readonly KeyedRecipient[];
  readonly messageId: string;
  readonly subject: string;
  /** A channel post's secret: sealed symmetrically. */
  readonly secret?: string;
}

/** The chat message of `c` with `bytes` as its file's content (none without a file). */
function withContent(c: ChatInner, bytes: Uint8Array | undefined) {
  const { file, ...rest } = c.message;
  return file && bytes ? { ...rest, file: { ...file, bytes } } : rest;
}

/** Builds the mails of one account. */
export class MailComposer {
  /**
   * `spool`: where a chat message with a file of `SPOOL_FROM_FILE_BYTES` or more is rendered as a
   * stream (without one, every mail is rendered in memory).
   */
  constructor(
    private readonly self: SelfIdentity,
    private readonly keys: PeerKeyCache,
    private readonly spool?: MailSpool,
  ) {}

  /** A new Message-ID (no angle brackets) in the account's domain. */
  newMessageId(): string {
    const domain = this.self.addr.slice(this.self.addr.lastIndexOf("@") + 1) || "localhost";
    return `${newToken()}@${domain}`;
  }

  #envelope(messageId: string, ciphertext: Uint8Array): EnvelopeInput {
    return {
      from: this.self.addr,
      messageId: `<${messageId}>`,
      date: new Date(),
      ciphertext,
      boundary: newToken(),
    };
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
    const raw = renderEncryptedEnvelope(this.#envelope(messageId, ciphertext));
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
   * system message asks for no receipts. A file of `SPOOL_FROM_FILE_BYTES` or more is streamed
   * into the spool (`spool` set, `raw` empty). `admitSize` is told the mail's exact size before
   * the mail is written (it throws to refuse it).
   */
  async renderChat(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
    admitSize: (bytes: number) => void = () => {},
  ): Promise<RenderedMail> {
    const c = this.#chatInner(draft, chat, recipients);
    const file = draft.file;
    if (file !== undefined && c.message.file !== undefined && this.#streams(c, file.bytes)) {
      return await this.#renderToSpool(c, file, admitSize);
    }
    const bytes = file && await Deno.readFile(file.path);
    const inner = renderChatMessage(withContent(c, bytes));
    const mail = await this.seal(inner, c.to, c.messageId, c.subject, c.secret);
    admitSize(mail.raw.length);
    return mail;
  }

  /** Whether a chat message with a file of `fileBytes` is rendered as a stream into the spool. */
  #streams(c: ChatInner, fileBytes: number): boolean {
    return this.spool !== undefined && fileBytes >= SPOOL_FROM_FILE_BYTES &&
      c.secret === undefined && this.#streamsKey();
  }

  /** Whether our key signs as a stream (pgp_stream.ts). */
  #streamsKey(): boolean {
    const algo = this.self.privateKey.getAlgorithmInfo().algorithm;
    return algo === "eddsaLegacy" || algo === "ed25519";
  }

  /**
   * Renders a chat message with a large file straight into a spool file, never holding the file
   * or the mail whole: the file's base64 lines, the MIME around them, OpenPGP and the armor are
   * streamed (the file is read twice: to sign, then to encrypt). `admitSize` sees the mail's exact
   * size before anything is written.
   */
  async #renderToSpool(
    c: ChatInner,
    file: { readonly path: string; readonly bytes: number },
    admitSize: (bytes: number) => void,
  ): Promise<RenderedMail> {
    const enc = new TextEncoder();
    const around = renderChatMessageAround({ ...c.message, file: c.message.file! });
    const head = enc.encode(around.head);
    const tail = enc.encode(around.tail);
    const plaintext: PlaintextSource = {
      bytes: head.length + base64LinesLength(file.bytes) + tail.length,
      async *open() {
        yield head;
        using f = await Deno.open(file.path, { read: true });
        yield* base64LineChunks(f.readable, 76, false);
        yield tail;
      },
    };
    return await this.#sealToSpool(plaintext, c.to, c.messageId, admitSize, c.subject);
  }

  /**
   * Encrypts and signs `plaintext` as a stream to `to` and self straight into a spool file (the
   * armored envelope around it), never holding it whole; `admitSize` sees the mail's exact size
   * before anything is written.
   */
  async #sealToSpool(
    plaintext: PlaintextSource,
    to: readonly KeyedRecipient[],
    messageId: string,
    admitSize: (bytes: number) => void,
    subject?: string,
  ): Promise<RenderedMail> {
    const enc = new TextEncoder();
    const encrypted = await encryptAndSignStream({
      plaintext,
      recipients: await Promise.all(to.map((r) => this.keys.get(r.publicKey))),
      signingKey: this.self.privateKey,
    });
    const envelope = renderEncryptedEnvelopeAround(this.#envelope(messageId, new Uint8Array(0)));
    const envHead = enc.encode(envelope.head);
    const envTail = enc.encode(envelope.tail);
    const total = envHead.length + armoredLength(encrypted.bytes) + envTail.length;
    admitSize(total);
    const spool = this.spool!;
    const spooled = await spool.write((async function* () {
      yield envHead;
      yield* armorChunks(encrypted.chunks);
      yield envTail;
    })());
    if (spooled.bytes !== total) {
      await spool.remove(spooled.name);
      throw new Error(`rendered ${spooled.bytes} bytes where ${total} were computed`);
    }
    return {
      raw: new Uint8Array(0),
      spool: spooled.name,
      rfc724Mid: messageId,
      envelopeFrom: this.self.addr,
      recipients: to.map((r) => r.addr),
      ...(subject === undefined ? {} : { subject }),
    };
  }

  /**
   * Seals a mail whose inner MIME is `plaintext` (read as a stream, possibly twice): into the
   * spool when it is `SPOOL_FROM_FILE_BYTES` or more and the key signs as a stream, else read into
   * memory and sealed as `seal` does. A relay part is sealed so.
   */
  async sealStream(
    plaintext: PlaintextSource,
    to: readonly KeyedRecipient[],
    messageId: string,
  ): Promise<RenderedMail> {
    if (
      this.spool !== undefined && plaintext.bytes >= SPOOL_FROM_FILE_BYTES && this.#streamsKey()
    ) {
      return await this.#sealToSpool(plaintext, to, messageId, () => {});
    }
    const inner = new Uint8Array(plaintext.bytes);
    let at = 0;
    for await (const chunk of plaintext.open()) {
      inner.set(chunk, at);
      at += chunk.byteLength;
    }
    if (at !== plaintext.bytes) {
      throw new Error(`read ${at} bytes where ${plaintext.bytes} were due`);
    }
    return await this.seal(inner, to, messageId);
  }

  /**
   * An upper bound of the size of the mail `seal`/`sealStream` make of an inner MIME of
   * `fixedBytes` plus n bytes to `recipients` others and self: the sizing `chatSizer` uses.
   */
  sealedSizer(fixedBytes: number, recipients: number): (bytes: number) => number {
    const envelope = this.#envelope(this.newMessageId(), new Uint8Array(0));
    return (bytes) =>
      encryptedEnvelopeLength(
        envelope,
        encryptedLengthBound(fixedBytes + bytes, recipients + 1, false),
      );
  }

  /**
   * An upper bound of the size in bytes of the mail `renderChat` makes of `draft` (exact for the
   * MIME, the base64 of the file, the armor and the envelope; bounded for OpenPGP), from the
   * file's size alone: the file is not read. `extraBytes`: room for headers added later (the
   * protected-file PDUs).
   */
  measureChat(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
    extraBytes = 0,
  ): number {
    return this.chatSizer(draft, chat, recipients, extraBytes)(draft.file?.bytes ?? 0);
  }

  /**
   * `measureChat` as a function of the file's size, the rest of `draft` fixed (it must have a
   * file for the size to count): what the same message with a file of n bytes would take.
   */
  chatSizer(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
    extraBytes = 0,
  ): (fileBytes: number) => number {
    const c = this.#chatInner(draft, chat, recipients);
    const inner = renderChatMessage(withContent(c, new Uint8Array(0)));
    const envelope = this.#envelope(c.messageId, new Uint8Array(0));
    const keys = c.secret !== undefined ? 1 : c.to.length + 1;
    return (fileBytes) => {
      const innerBytes = inner.length + extraBytes +
        (draft.file === undefined ? 0 : base64LinesLength(fileBytes));
      const cipherBytes = encryptedLengthBound(innerBytes, keys, c.secret !== undefined);
      return encryptedEnvelopeLength(envelope, cipherBytes);
    };
  }

  /** The inner MIME of a chat message but its file's content, and how it is sealed. */
  #chatInner(
    draft: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
  ): ChatInner {
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
    };
    const to = recipients.map(recipientOf);
    // Delta Chat takes gossip only for addresses in the inner To (not a removed member).
    const gossip = group?.gossip
      ? to.filter((r) => group.to.some((m) => m.addr === r.addr))
        .map((r) => ({ addr: r.addr, keydata: r.publicKey }))
      : channel?.change?.kind === "member-added"
      ? to.map((r) => ({ addr: r.addr, keydata: r.publicKey }))
      : undefined;
    const message = {
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
    };
    return { message, to, messageId, subject, ...(post ? { secret: channel.secret } : {}) };
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
