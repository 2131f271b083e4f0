/**
 * What sending renders: a draft of a message to a chat, the finished mail with its envelope,
 * and the function type that turns one into the other. Types only.
 */
import type { Viewtype } from "../protocol.ts";
import type { ChatRecord, ContactRecord } from "../store/mod.ts";
import type { BlobFile } from "./blobs.ts";
import type { ChannelMail } from "./channel_mail.ts";
import type { GroupMail } from "./group_mail.ts";

/** A message about to be rendered (no id yet). */
export interface OutgoingDraft {
  readonly chatId: number;
  readonly text: string;
  readonly viewtype: Viewtype;
  /** Unix seconds (the Date header). */
  readonly timestamp: number;
  /** The attachment, already in the blob directory; read it from `file.path`. */
  readonly file?: BlobFile;
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
}

/** What a renderer produced: the complete encrypted mail and its SMTP envelope. */
export interface RenderedMail {
  readonly raw: Uint8Array;
  /** Message-ID without angle brackets; must be new. */
  readonly rfc724Mid: string;
  readonly envelopeFrom: string;
  readonly recipients: readonly string[];
  /** The Subject it used, stored with the message. */
  readonly subject?: string;
}

/** Renders and encrypts a draft for the chat's recipients (runs before the transaction). */
export type RenderFn = (
  message: OutgoingDraft,
  chat: ChatRecord,
  recipients: readonly ContactRecord[],
) => Promise<RenderedMail>;
