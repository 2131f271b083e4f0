/**
 * Builds nodemailer SMTP transports from stored server parameters: TLS always verified
 * (implicit TLS or required STARTTLS), a fixed client name (no host name lookup), no logging.
 */
import nodemailer from "nodemailer";
import { isIp } from "./imap_client.ts";
import type { Endpoint } from "./server_params.ts";

/** A pooled-capable SMTP transport for `endpoint`. */
export function createSmtpTransport(endpoint: Endpoint, password: string, pool = false) {
  return nodemailer.createTransport({
    host: endpoint.host,
    port: endpoint.port,
    secure: endpoint.security === "ssl",
    requireTLS: endpoint.security === "starttls",
    ignoreTLS: endpoint.security === "plain",
    auth: { user: endpoint.user, pass: password },
    name: "edge-gateway.localhost",
    tls: {
      rejectUnauthorized: true,
      minVersion: "TLSv1.2",
      ...(isIp(endpoint.host) ? {} : { servername: endpoint.host }),
    },
    pool,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  });
}

/** Connects and authenticates once; throws with the server's reason on failure. */
export async function verifySmtpLogin(endpoint: Endpoint, password: string): Promise<void> {
  const transport = createSmtpTransport(endpoint, password);
  try {
    await transport.verify();
  } finally {
    transport.close();
  }
}
