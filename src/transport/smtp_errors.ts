/**
 * Sorting SMTP failures (nodemailer errors) into what the outbox loop does with the mail:
 * retry after a pause (connection trouble), retry with back-off (4xx), or give up (5xx).
 */

/** How a failed send is handled. */
export type SmtpFailure = "permanent" | "transient" | "connection";

/** Network-level codes of nodemailer and of Node's sockets. */
const CONNECTION_CODES = new Set(
  ("ECONNECTION ETIMEDOUT ESOCKET EDNS ETLS EPROXY EAUTH ENOAUTH ECONNREFUSED ECONNRESET EPIPE " +
    "EHOSTUNREACH ENETUNREACH ENOTFOUND EAI_AGAIN").split(" "),
);

/** nodemailer's names of the session steps before a mail transaction starts. */
const SESSION_COMMANDS = /^(CONN|EHLO|HELO|LHLO|STARTTLS|SOCKET_TIMEOUT|AUTH\b)/;

/**
 * Sorts a nodemailer error. "connection": the session failed before or around the mail
 * transaction (network, TLS, greeting, 421, and also login): it says nothing about the mail, so
 * it never makes a mail give up — a wrong password is configuration trouble, and a relay that is
 * restarting may answer 5xx to AUTH for a moment; giving up would fail every queued message.
 * "permanent": a 5xx answer to MAIL FROM, RCPT TO or DATA (e.g. 523 Encryption Needed; 503, a
 * bad command sequence, excepted), or a mail nodemailer refuses itself. Else "transient" (4xx).
 */
export function classifySmtpError(err: unknown): SmtpFailure {
  const e = (err ?? {}) as { code?: unknown; command?: unknown; responseCode?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  const command = typeof e.command === "string" ? e.command : "";
  const status = typeof e.responseCode === "number" ? e.responseCode : 0;
  if (CONNECTION_CODES.has(code) || SESSION_COMMANDS.test(command) || status === 421) {
    return "connection";
  }
  if (status >= 500 && status < 600 && status !== 503) return "permanent";
  if (!status && (code === "EENVELOPE" || code === "EMESSAGE")) return "permanent";
  return "transient";
}
