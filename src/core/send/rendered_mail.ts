/**
 * What sending renders: a draft of a message to a chat, the finished mail with its envelope,
 * the function type that turns one into the other, and the send steps every message of ours
 * goes through (checked before anything is stored, rendered when it can go out). Types only.
 */
import type { GatewayEvent } from "../../events/types.ts";
import type { Viewtype } from "../../protocol.ts";
import type { ChatRecord, ContactRecord } from "../../store/mod.ts";
import type { BlobFile } from "../blobs.ts";
import type { ChannelMail } from "../channels/mail.ts";
import type { GroupMail } from "../groups/mail.ts";

/** A message about to be rendered (no id yet). */
export interface OutgoingDraft {
  readonly chatId: number;
  readonly text: string;
  readonly viewtype: Viewtype;
  /** Unix seconds (the Date header). */
  readonly timestamp: number;
  /** The attachment, already in the blob directory; read it from `file.path` (undefined: none). */
  readonly file?: BlobFile | undefined;
  /**
   * Message-ID for In-Reply-To/References: the quoted message's, else the chat's newest ('' when
   * none).
   */
  readonly inReplyTo: string;
  /** Text of the quoted message, sent as `> ` lines above the text ('' for no quote). */
  readonly quote: string;
  /** For a group: its id, name, members and the change the mail announces (group_mail.ts). */
  readonly group?: GroupMail;
  /** For a channel: its id, name and secret, and the change a system mail announces. */
  readonly channel?: ChannelMail;
  /**
   * Headers added inside the encrypted part (the protected-file PDUs that travel with a `.prv`;
   * Delta Chat ignores them).
   */
  readonly extraHeaders?: readonly [string, string][];
}

/**
 * What a renderer produced: the complete encrypted mail and its SMTP envelope. A mail with a
 * large file is written to the spool instead (`spool`, `raw` then empty).
 */
export interface RenderedMail {
  readonly raw: Uint8Array;
  /** The spool file (`MailSpool`) holding the mail when `raw` does not. */
  readonly spool?: string;
  /** Message-ID without angle brackets; must be new. */
  readonly rfc724Mid: string;
  readonly envelopeFrom: string;
  readonly recipients: readonly string[];
  /** The Subject it used, stored with the message. */
  readonly subject?: string;
  /** Events published with the commit that stores message `msgId` with this mail. */
  readonly announce?: (msgId: number) => readonly GatewayEvent[];
  /**
   * Store work in the transaction that stores message `msgId` with this mail (a file sent as
   * relay parts records its transfer here, so a crash cannot leave one without the other).
   */
  readonly record?: (msgId: number) => void;
  /**
   * Mails of their own queued in the same commit (a protected file's PDUs to each of several
   * recipients): a message is never stored without them, nor they without it.
   */
  readonly separateMails?: readonly RenderedMail[];
}

/**
 * Renders and encrypts a draft for the chat's recipients (runs before the transaction).
 * A spooled mail the caller does not store is the caller's to remove from the spool.
 */
export type RenderFn = (
  message: OutgoingDraft,
  chat: ChatRecord,
  recipients: readonly ContactRecord[],
) => Promise<RenderedMail>;

/**
 * The steps a chat message of ours takes, the same for every chat type and path (sent at once or
 * after a SecureJoin handshake): `admit` refuses it (throws) before anything is stored: the
 * protected-file rules and the license gate; `render` makes the mail when it can go out.
 */
export interface SendSteps {
  admit(
    message: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
  ): Promise<void>;
  readonly render: RenderFn;
  /**
   * Optional cheap refusal (throws) before the file is copied into the blob directory: the draft's
   * file is the caller's file as named (`blob` and `path` empty), the rest as `admit` gets it.
   */
  precheck?(
    message: OutgoingDraft,
    chat: ChatRecord,
    recipients: readonly ContactRecord[],
  ): void;
}
