/** Recognises TLS failures caused by this device's clock: a certificate expired or not yet valid. */

import { MailError, type MailProblem } from "./mail_problem.ts";

/** One pattern that matches where any of `parts` does. */
function anyOf(parts: readonly RegExp[]): RegExp {
  return new RegExp(parts.map((p) => p.source).join("|"));
}

/** Which end of the certificate's validity the clock is past. */
export const TlsClockFault = { EXPIRED: "expired", NOT_YET_VALID: "not_yet_valid" } as const;
export type TlsClockFault = typeof TlsClockFault[keyof typeof TlsClockFault];

/**
 * The words for each fault. rustls (`Deno.connectTls`, implicit-TLS IMAP), measured with Deno
 * 2.9.5: "invalid peer certificate: certificate expired: verification time … (UNIX), but
 * certificate is not valid after …" and "… certificate not valid yet: …"; older rustls prints
 * `Expired` / `NotValidYet`, newer may print `ExpiredContext { … }` / `NotValidYetContext { … }`.
 * OpenSSL's code and text are matched too, in case `node:tls` ever passes them on.
 */
const FAULT_PATTERNS: readonly (readonly [TlsClockFault, RegExp])[] = [
  [
    TlsClockFault.EXPIRED,
    anyOf([
      /invalid peer certificate: (?:certificate expired|Expired(?:Context)?\b)/,
      /InvalidCertificate\(Expired\b/,
      /CERT_HAS_EXPIRED|certificate has expired/,
    ]),
  ],
  [
    TlsClockFault.NOT_YET_VALID,
    anyOf([
      /invalid peer certificate: (?:certificate not valid yet|NotValidYet(?:Context)?\b)/,
      /InvalidCertificate\(NotValidYet\b/,
      /CERT_NOT_YET_VALID|certificate is not yet valid/,
    ]),
  ],
];

/**
 * What Deno's `node:tls` (SMTP, and STARTTLS IMAP) says for every certificate it cannot verify,
 * an expired or a not yet valid one included (Deno 2.9.5, code UNABLE_TO_VERIFY_LEAF_SIGNATURE;
 * nodemailer replaces the code with ESOCKET): it needs a second look (tls_clock_probe.ts).
 */
const UNVERIFIED = /unable to verify the first certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE/;

/** How deep `cause` chains are followed (a wrapped wrapper of the TLS error at most). */
const MAX_CAUSES = 4;

/** The texts of an error and of its causes: messages and codes. */
function textsOf(err: unknown): string[] {
  const out: string[] = [];
  let e: unknown = err;
  for (let i = 0; i <= MAX_CAUSES && e !== undefined && e !== null; i++) {
    if (typeof e !== "object") {
      out.push(String(e));
      break;
    }
    const { message, code, cause } = e as { message?: unknown; code?: unknown; cause?: unknown };
    if (typeof message === "string") out.push(message);
    if (typeof code === "string") out.push(code);
    e = cause;
  }
  return out;
}

/** The clock fault a TLS failure names, or undefined when it names none. */
export function tlsClockFault(err: unknown): TlsClockFault | undefined {
  const texts = textsOf(err);
  for (const [fault, pattern] of FAULT_PATTERNS) {
    if (texts.some((t) => pattern.test(t))) return fault;
  }
  return undefined;
}

/** True for `node:tls`'s catch-all certificate failure, which may hide a clock fault. */
export function isUnverifiedCertificate(err: unknown): boolean {
  return textsOf(err).some((t) => UNVERIFIED.test(t));
}

/** The operator's sentence for a fault seen at `nowMs` (this device's clock). */
export function tlsClockDetail(fault: TlsClockFault, nowMs: number): string {
  const seen = fault === TlsClockFault.EXPIRED ? "expired" : "not yet valid";
  return `the relay's TLS certificate is ${seen} at this device's clock ` +
    `(${new Date(nowMs).toISOString()}): check the system clock`;
}

/** The `/health` report of a fault seen at `nowMs`. */
export function tlsClockProblem(fault: TlsClockFault, nowMs: number): MailProblem {
  return { error: MailError.TLS_CLOCK, detail: tlsClockDetail(fault, nowMs) };
}
