/**
 * What the transfer manager is built from (docs/transfer.md#timeouts): its timings and bounds,
 * the account's mail sealer, and the step that shows a completed file. Types and defaults, and
 * the configured request time.
 */
import type { PlaintextSource } from "../../crypto/pgp_stream.ts";
import type { BlobFile } from "../blobs.ts";
import type { CoreContext } from "../context.ts";
import type { KeyedRecipient } from "../send/mail_composer.ts";
import type { RenderedMail } from "../send/rendered_mail.ts";
import type { DirectEndpoint, DirectPath } from "./direct_path.ts";
import { ConfigKey, type Store } from "../../store/mod.ts";

/** Timings and bounds (docs/transfer.md#timeouts). */
export interface TransferOptions {
  /** Part mails of one transfer in the outbox at a time. */
  readonly window: number;
  /** Quiet time after which a receiver asks for its missing parts again. */
  readonly requestAfterMs: number;
  /** Requests a receiver sends before it gives the transfer up. */
  readonly maxRequests: number;
  /** The sender keeps answering requests this long after the message was sent. */
  readonly outExpiryMs: number;
  /** The largest file a receiver accepts. */
  readonly maxFileBytes: number;
  /** Free space a receiver keeps besides the file. */
  readonly diskReserveBytes: number;
  /** How long a sender waits for the answer to a direct-path offer before it takes the relay. */
  readonly directAnswerMs: number;
  /** Files below this always take the relay, never the direct path (about 1 MB, docs/transfer.md#direct-path). */
  readonly directMinBytes: number;
}

export const DEFAULT_TRANSFER_OPTIONS: TransferOptions = {
  window: 2,
  requestAfterMs: 5 * 60_000,
  maxRequests: 50,
  outExpiryMs: 7 * 24 * 3_600_000,
  maxFileBytes: 64 * 1024 ** 3,
  diskReserveBytes: 256 * 1024 * 1024,
  directAnswerMs: 60_000,
  directMinBytes: 1024 * 1024,
};

/** What the manager needs from the account's mail composer. */
export interface TransferSealer {
  newMessageId(): string;
  seal(
    inner: Uint8Array,
    to: readonly KeyedRecipient[],
    messageId: string,
  ): Promise<RenderedMail>;
  /** Seals an inner MIME read as a stream: into the spool when large (a relay part). */
  sealStream(
    plaintext: PlaintextSource,
    to: readonly KeyedRecipient[],
    messageId: string,
  ): Promise<RenderedMail>;
  /** The size bound of a sealed mail of `fixedBytes` + n inner bytes (as `chatSizer` sizes). */
  sealedSizer(fixedBytes: number, recipients: number): (bytes: number) => number;
}

/** The relay's quiet time before missing parts are asked for again, when configured (ms). */
export function configuredRequestAfterMs(store: Store): number | undefined {
  const n = Number(store.config.fresh(ConfigKey.TRANSFER_REQUEST_AFTER_MS) ?? NaN);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Shows a completed incoming file: the announcing mail with the assembled blob. */
export type ShowAssembled = (
  announce: Uint8Array,
  file: BlobFile,
) => Promise<{ msgId: number; chatId: number } | undefined>;

/** Inputs of the transfer manager. */
export interface TransferDeps {
  readonly ctx: CoreContext;
  readonly selfAddr: string;
  readonly sealer: TransferSealer;
  readonly options?: Partial<TransferOptions> | undefined;
  /** A direct strategy to use instead of the QUIC one (tests). */
  readonly direct?: DirectPath | undefined;
  /**
   * The process's QUIC endpoint (docs/p2p.md); none: this gateway's direct path is off, it
   * offers nothing and declines offers at once.
   */
  readonly endpoint?: DirectEndpoint | undefined;
}
