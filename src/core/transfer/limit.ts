/**
 * The relay's one-mail limit and what fits under it: a file as one chat mail costs ~1.88× its
 * size (base64 in the MIME, then the armor), a relay part ~1.37× its payload (binary literal
 * data, one armor layer). docs/transfer.md#sizes.
 */
import { ConfigKey, type Store } from "../../store/mod.ts";

/** Mail bytes per file byte when a file travels as one chat mail (base64, then armor). */
export const ONE_MAIL_RATIO = 1.88;
/** Mail bytes per payload byte of a relay part (armor only: 4/3 plus line ends ≈ 1.37). */
export const PART_RATIO = 1.37;
/** Headers, OpenPGP packets, keys and envelope of one mail, with room to spare. */
export const MAIL_OVERHEAD_BYTES = 32 * 1024;
/** The smallest part payload a transfer uses, whatever the limit says. */
export const MIN_PART_BYTES = 16 * 1024;
/**
 * The largest part payload, whatever the limit allows: a part is rendered and read whole (file
 * bytes, MIME, OpenPGP, armor: ~5× its payload in memory at the peak), so 8 MiB keeps both
 * gateways' memory bounded on a relay that takes 30 MiB per mail.
 */
export const MAX_PART_BYTES = 8 * 1024 * 1024;

/**
 * The relay's largest accepted mail in bytes (config key `max_message_bytes`, learnt from SMTP
 * SIZE), or undefined when unknown: then every file goes as one mail, as before. The one place
 * the transfer layer reads the limit (the sendstream branch's accessor replaces it).
 */
export function relayMessageLimit(store: Store): number | undefined {
  const raw = store.config.fresh(ConfigKey.MAX_MESSAGE_BYTES);
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Whether a file of `fileBytes` fits one chat mail under `limit`. */
export function fitsOneMail(fileBytes: number, limit: number): boolean {
  return fileBytes * ONE_MAIL_RATIO + MAIL_OVERHEAD_BYTES <= limit;
}

/**
 * The payload of one relay part under `limit`: a multiple of 1 KiB, between MIN_PART_BYTES and
 * MAX_PART_BYTES.
 */
export function partPayloadBytes(limit: number): number {
  const fit = Math.floor((limit - MAIL_OVERHEAD_BYTES) / PART_RATIO / 1024) * 1024;
  return Math.min(MAX_PART_BYTES, Math.max(MIN_PART_BYTES, fit));
}

/** The configured quiet time before missing parts are asked for again, when set (ms). */
export function configuredRequestAfterMs(store: Store): number | undefined {
  const n = Number(store.config.fresh(ConfigKey.TRANSFER_REQUEST_AFTER_MS) ?? NaN);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
