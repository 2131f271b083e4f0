/**
 * A received mail as the IMAP drain hands it on: its bytes when it is small, else the temp file
 * it was fetched into (reception reads that as a stream and never holds it whole).
 */
import type { ByteSource } from "./line_reader.ts";

/** A raw mail in memory or in a file. */
export type MailSource =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | { readonly kind: "file"; readonly path: string; readonly size: number };

/** A mail held in memory. */
export function mailBytes(bytes: Uint8Array): MailSource {
  return { kind: "bytes", bytes };
}

/** The mail's size in bytes. */
export function mailSize(mail: MailSource): number {
  return mail.kind === "bytes" ? mail.bytes.byteLength : mail.size;
}

/** The first `max` bytes of the mail (all of it when it is shorter). */
export async function mailHead(mail: MailSource, max: number): Promise<Uint8Array> {
  if (mail.kind === "bytes") return mail.bytes.subarray(0, max);
  using file = await Deno.open(mail.path, { read: true });
  const head = new Uint8Array(Math.min(max, mail.size));
  let at = 0;
  while (at < head.length) {
    const n = await file.read(head.subarray(at));
    if (n === null) break;
    at += n;
  }
  return head.subarray(0, at);
}

/** The whole mail in memory (for the few paths that keep a mail whole, like the quarantine). */
export async function mailWhole(mail: MailSource): Promise<Uint8Array> {
  return mail.kind === "bytes" ? mail.bytes : await Deno.readFile(mail.path);
}

/** The mail as a source read into the reader's own buffer (close it when done). */
export async function openMail(mail: MailSource): Promise<ByteSource> {
  if (mail.kind === "file") return await Deno.open(mail.path, { read: true });
  const bytes = mail.bytes;
  let at = 0;
  return {
    read(p) {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(p.length, bytes.length - at);
      p.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
    close() {},
  };
}
