/** The relay's message size limit, read from its EHLO answer (the SMTP SIZE extension, RFC 1870). */
import SMTPConnection from "nodemailer/lib/smtp-connection";
import type { Endpoint } from "./server_params.ts";
import { smtpOptions, smtpReason } from "./smtp_client.ts";

/**
 * The limit an EHLO answer advertises: `SIZE n` with n > 0 is the largest mail in bytes the server
 * accepts; `SIZE` alone or `SIZE 0` (no fixed limit) and no SIZE line at all give undefined.
 */
export function sizeLimitOfEhlo(ehlo: string): number | undefined {
  for (const line of ehlo.split(/\r?\n/)) {
    const m = /^(?:\d{3}[ -])?SIZE(?:[ \t]+(\d+))?[ \t]*$/i.exec(line.trim());
    if (m === null) continue;
    const n = m[1] === undefined ? 0 : Number(m[1]);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  }
  return undefined;
}

/**
 * Connects to the SMTP server of `endpoint` (TLS as for sending), reads its EHLO answer after
 * any STARTTLS, and quits without logging in (servers advertise SIZE before AUTH). Resolves the
 * limit in bytes, or undefined when the server names none; rejects when it cannot be reached.
 */
export function probeSmtpSizeLimit(
  endpoint: Endpoint,
  password: string,
  timeoutMs = 15_000,
): Promise<number | undefined> {
  const connection = new SMTPConnection({
    ...smtpOptions(endpoint, password),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return new Promise<number | undefined>((resolve, reject) => {
    connection.once("error", (err: unknown) => {
      connection.close();
      reject(new Error(`SMTP SIZE probe failed: ${smtpReason(err)}`, { cause: err }));
    });
    connection.connect(() => {
      const ehlo = typeof connection.lastServerResponse === "string"
        ? connection.lastServerResponse
        : "";
      connection.quit();
      resolve(sizeLimitOfEhlo(ehlo));
    });
  });
}
