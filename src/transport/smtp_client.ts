/**
 * Builds nodemailer SMTP transports from stored server parameters: TLS always verified (implicit
 * TLS or required STARTTLS), a fixed client name (no `os.hostname()` call), no logging.
 * Trust of a private CA: see tls_options.ts (DENO_CERT).
 */
import nodemailer from "nodemailer";
import type { Endpoint } from "./server_params.ts";
import { tlsOptionsFor } from "./tls_options.ts";

/** Name sent in EHLO; a fixed one, so nodemailer never asks the OS for the host name. */
export const SMTP_CLIENT_NAME = "edge-gateway.localhost";

/** The nodemailer SMTP options for `endpoint` (exported for tests). */
export function smtpOptions(endpoint: Endpoint, password: string, pool = false) {
  return {
    host: endpoint.host,
    port: endpoint.port,
    // "ssl": TLS from the first byte; "starttls": the upgrade is required and a server without it
    // fails the send; "plain" only when the operator allowed it (EDGE_ALLOW_PLAINTEXT_MAIL).
    secure: endpoint.security === "ssl",
    requireTLS: endpoint.security === "starttls",
    ignoreTLS: endpoint.security === "plain",
    auth: { user: endpoint.user, pass: password },
    name: SMTP_CLIENT_NAME,
    tls: { ...tlsOptionsFor(endpoint.host) },
    pool,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  };
}

/** An SMTP transport for `endpoint` (pooled when `pool`). Close it when done. */
export function createSmtpTransport(endpoint: Endpoint, password: string, pool = false) {
  return nodemailer.createTransport(smtpOptions(endpoint, password, pool));
}

/**
 * SMTP health check: connects, does TLS, authenticates and quits; throws with the server's reason
 * on failure. Provisioning uses it to prove a candidate before storing it.
 */
export async function verifySmtpLogin(endpoint: Endpoint, password: string): Promise<void> {
  const transport = createSmtpTransport(endpoint, password);
  try {
    await transport.verify();
  } catch (err) {
    throw new Error(`SMTP login failed: ${smtpReason(err)}`, { cause: err });
  } finally {
    transport.close();
  }
}

/** The most telling part of a nodemailer error: the server's response when there is one. */
export function smtpReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as Error & { response?: string; code?: string };
  if (e.response && !e.message.includes(e.response)) return `${e.message} (${e.response})`;
  return e.code && !e.message.includes(e.code) ? `${e.message} [${e.code}]` : e.message;
}
