/**
 * Builds imapflow clients from stored server parameters: TLS always verified (implicit TLS, or
 * STARTTLS that must succeed), logging off. Trust of a private CA: see tls_options.ts (DENO_CERT).
 */
import { ImapFlow, type ImapFlowOptions } from "imapflow";
import type { Endpoint } from "./server_params.ts";
import { slabTlsTransport } from "./slab_transport.ts";
import { tlsOptionsFor } from "./tls_options.ts";

/** Connection timeouts in ms. */
export const IMAP_TIMEOUTS = { connect: 10_000, greeting: 10_000, socket: 60_000 } as const;

/**
 * Largest literal the client accepts (imapflow's default is 1 GiB): above the drain's largest
 * fetched mail (inbox_drain.ts), so a server announcing more fails the connection, not memory.
 */
export const IMAP_MAX_LITERAL_BYTES = 64 * 1024 * 1024;

/** The imapflow options for `endpoint` (exported for tests; the password is only put in here). */
export function imapOptions(endpoint: Endpoint, password: string): ImapFlowOptions {
  const tls = tlsOptionsFor(endpoint.host);
  return {
    host: endpoint.host,
    port: endpoint.port,
    // "ssl": TLS from the first byte. "starttls": the upgrade is mandatory (imapflow fails the
    // connection instead of continuing in cleartext). "plain" is only ever stored when the
    // operator allowed plaintext mail (EDGE_ALLOW_PLAINTEXT_MAIL).
    secure: endpoint.security === "ssl",
    doSTARTTLS: endpoint.security === "starttls"
      ? true
      : endpoint.security === "plain"
      ? false
      : undefined,
    auth: { user: endpoint.user, pass: password },
    servername: tls.servername,
    tls: { ...tls },
    logger: false,
    emitLogs: false,
    // The IMAP loop runs IDLE itself (imap_loop.ts); imapflow's auto-IDLE would race with it.
    disableAutoIdle: true,
    connectionTimeout: IMAP_TIMEOUTS.connect,
    greetingTimeout: IMAP_TIMEOUTS.greeting,
    socketTimeout: IMAP_TIMEOUTS.socket,
    maxLiteralSize: IMAP_MAX_LITERAL_BYTES,
    maxResponseSize: 2 * IMAP_MAX_LITERAL_BYTES,
    clientInfo: { name: "edge-gateway" },
    // Implicit TLS reads into 4 MiB slabs (slab_transport.ts): node:tls left tens of MB of the C
    // allocator's heap in pieces after a burst of large mails.
    ...(endpoint.security === "ssl" ? { transport: slabTlsTransport() } : {}),
  };
}

/** A new, not yet connected IMAP client for `endpoint`. */
export function createImapClient(endpoint: Endpoint, password: string): ImapFlow {
  return new ImapFlow(imapOptions(endpoint, password));
}

/**
 * Connects, authenticates and logs out once; throws with the server's reason when the
 * connection, the TLS handshake or the login fails. Used by provisioning to prove a candidate.
 */
export async function verifyImapLogin(endpoint: Endpoint, password: string): Promise<void> {
  const client = createImapClient(endpoint, password);
  client.on("error", () => {}); // surfaced through connect()'s rejection
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`IMAP login failed: ${imapReason(err)}`, { cause: err });
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** The most telling part of an imapflow error: the server's response text when there is one. */
export function imapReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as Error & { responseText?: string; code?: string; authenticationFailed?: boolean };
  if (e.authenticationFailed) {
    return `authentication failed${e.responseText ? ` (${e.responseText})` : ""}`;
  }
  if (e.responseText) return `${e.message} (${e.responseText})`;
  return e.code && !e.message.includes(e.code) ? `${e.message} [${e.code}]` : e.message;
}
