/**
 * Whether a message fits the relay's limit, decided before anything is stored: the size the mail
 * would have against the relay's limit (SMTP SIZE) and who it goes to. A file too large for one
 * mail goes as relay parts when every recipient's gateway takes them (docs/transfer.md), else it
 * is refused.
 */
import { GatewayError } from "../../errors.ts";
import type { ContactRecord } from "../../store/mod.ts";

/**
 * Room kept under the relay's limit for the headers relays add on the way (`Received:` lines of
 * the submission server and its filters), which count against the limit too.
 */
export const RELAY_HEADER_ROOM_BYTES = 4096;

/**
 * Room the protected-file PDUs of a `.prv` take in its chat mail, per recipient (they are added
 * when the mail is rendered; the rendered size is checked again then).
 */
export const PRV_PDU_ROOM_BYTES = 8 * 1024;

/**
 * The largest payload of one relay part, whatever the limit allows: a part is rendered and read
 * whole in memory, so 8 MiB keeps both gateways' memory bounded on a relay that takes 30 MiB.
 */
export const MAX_PART_BYTES = 8 * 1024 * 1024;
/** The smallest part payload a transfer uses; a limit that fits less refuses the file. */
export const MIN_PART_BYTES = 16 * 1024;

/** How a file too large for one mail could go as relay parts. */
export interface PartsQuestion {
  /** The file's size in bytes. */
  readonly fileBytes: number;
  /** Whether recipient `c`'s gateway announced it takes relay parts. */
  readonly capable: (c: ContactRecord) => boolean;
  /** The size of one part mail with a payload of n bytes (`MailComposer.partSizer`). */
  readonly partSizer: (payloadBytes: number) => number;
}

/** What the decision needs. */
export interface SizeQuestion {
  /** The mail's rendered size in bytes, or a safe upper bound of it. */
  readonly mailBytes: number;
  /** The relay's limit in bytes (`relayMessageLimit`); undefined: unknown, nothing is refused. */
  readonly limit: number | undefined;
  /** Everyone the mail goes to. */
  readonly recipients: readonly ContactRecord[];
  /** A file that may go as relay parts; none: one mail or nothing (text, channel posts). */
  readonly parts?: PartsQuestion | undefined;
}

/** How a message goes out, or why it cannot. */
export type SizeDecision =
  | { readonly kind: "one-mail" }
  | {
    readonly kind: "parts";
    /** Payload bytes of every part but the last. */
    readonly partSize: number;
    readonly parts: number;
  }
  | {
    readonly kind: "refuse";
    /** Recipients the file cannot reach: those whose gateway takes no parts (else every one). */
    readonly unreachable: readonly ContactRecord[];
  };

/** Whether a mail of `mailBytes` goes through a relay with `limit` (undefined: no known limit). */
export function fitsOneMail(mailBytes: number, limit: number | undefined): boolean {
  return limit === undefined || mailBytes <= limit - RELAY_HEADER_ROOM_BYTES;
}

/**
 * One mail when it fits the limit (or the limit is unknown); relay parts when it does not, the
 * message has a file that may go so and every recipient's gateway takes parts; otherwise refused,
 * naming the recipients that take no parts (Delta Chat never will).
 */
export function decideSize(q: SizeQuestion): SizeDecision {
  if (fitsOneMail(q.mailBytes, q.limit)) return { kind: "one-mail" };
  const { parts } = q;
  if (parts === undefined || q.recipients.length === 0) {
    return { kind: "refuse", unreachable: q.recipients };
  }
  const unreachable = q.recipients.filter((c) => !parts.capable(c));
  if (unreachable.length > 0) return { kind: "refuse", unreachable };
  const partSize = partPayloadBytes(parts.partSizer, q.limit!);
  if (partSize === undefined) return { kind: "refuse", unreachable: q.recipients };
  return { kind: "parts", partSize, parts: Math.max(1, Math.ceil(parts.fileBytes / partSize)) };
}

/**
 * The payload of one relay part whose mail (`partSizer`) fits `limit`: a multiple of 1 KiB, at
 * most MAX_PART_BYTES; undefined when less than MIN_PART_BYTES fits.
 */
export function partPayloadBytes(
  partSizer: (payloadBytes: number) => number,
  limit: number,
): number | undefined {
  const fit = largestFittingFile(partSizer, limit);
  if (fit === undefined) return undefined;
  const size = Math.min(MAX_PART_BYTES, Math.floor(fit / 1024) * 1024);
  return size < MIN_PART_BYTES ? undefined : size;
}

/**
 * The largest file size n for which `sizer(n)` (the mail's size with a file of n bytes, growing
 * with n) still fits `limit`; undefined when not even an empty file does.
 */
export function largestFittingFile(
  sizer: (fileBytes: number) => number,
  limit: number,
): number | undefined {
  if (!fitsOneMail(sizer(0), limit)) return undefined;
  let lo = 0; // fits
  let hi = limit; // a file as large as the limit never fits once encoded
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fitsOneMail(sizer(mid), limit)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The file a refusal names. */
export interface RefusedFile {
  readonly name: string;
  readonly bytes: number;
}

/** Names at most this many recipients in a refusal, then "and N more". */
const NAMED_RECIPIENTS = 3;

/** The message a size check is about. */
export interface SizedDraft {
  readonly file?: RefusedFile | undefined;
  readonly group?: unknown;
}

/**
 * Refuses (-1) a message whose mail of `mailBytes` bytes cannot reach `recipients` under the
 * relay's `limit` (see `decideSize`), naming the file and its size, the mail's size, the limit,
 * who cannot receive it (in a group, which members) and, when `sizer` tells the size for any file
 * size, the largest file that would fit. Otherwise returns the decision (one mail, or parts when
 * `parts` says how they could go).
 */
export function checkMailSize(
  mailBytes: number,
  limit: number | undefined,
  draft: SizedDraft,
  recipients: readonly ContactRecord[],
  sizer?: (fileBytes: number) => number,
  parts?: PartsQuestion,
): SizeDecision {
  const decision = decideSize({ mailBytes, limit, recipients, parts });
  if (decision.kind !== "refuse" || limit === undefined) return decision;
  const { file } = draft;
  const who = decision.unreachable.slice(0, NAMED_RECIPIENTS).map((c) => c.addr);
  const more = decision.unreachable.length - who.length;
  const names = more > 0 ? `${who.join(", ")} and ${more} more` : who.join(", ");
  const members = draft.group === undefined
    ? ""
    : `group member${decision.unreachable.length === 1 ? "" : "s"} `;
  const what = file === undefined ? "this message" : `file "${file.name}" (${file.bytes} bytes)`;
  const largest = file !== undefined && sizer !== undefined
    ? largestFittingFile(sizer, limit)
    : undefined;
  throw new GatewayError(
    `cannot send ${what}: as one mail it would be ${mailBytes} bytes, over the relay's limit ` +
      `of ${limit} bytes (get_info max_message_bytes), and ${members}${names} cannot receive a ` +
      `file in several mails; nothing was sent` +
      (largest === undefined ? "" : `; the largest file that fits is ${largest} bytes`),
  );
}
