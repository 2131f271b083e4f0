/**
 * Builds imapflow clients from stored server parameters: TLS always verified (implicit TLS or
 * mandatory STARTTLS), logging off. A private CA (the test relay's) is trusted via `DENO_CERT`.
 */
import { ImapFlow } from "imapflow";
import type { Endpoint } from "./server_params.ts";

/** Connection timeouts in ms. */
export const IMAP_TIMEOUTS = { connect: 10_000, greeting: 10_000, socket: 60_000 } as const;

/** A new, not yet connected IMAP client for `endpoint`. */
export function createImapClient(endpoint: Endpoint, password: string): ImapFlow {
  return new ImapFlow(
    {
      host: endpoint.host,
      port: endpoint.port,
      secure: endpoint.security === "ssl",
      doSTARTTLS: endpoint.security === "starttls"
        ? true
        : endpoint.security === "plain"
        ? false
        : undefined,
      auth: { user: endpoint.user, pass: password },
      servername: isIp(endpoint.host) ? undefined : endpoint.host,
      tls: { rejectUnauthorized: true, minVersion: "TLSv1.2" },
      logger: false,
      emitLogs: false,
      disableAutoIdle: true,
      connectionTimeout: IMAP_TIMEOUTS.connect,
      greetingTimeout: IMAP_TIMEOUTS.greeting,
      socketTimeout: IMAP_TIMEOUTS.socket,
      clientInfo: { name: "edge-gateway" },
    } as ConstructorParameters<typeof ImapFlow>[0],
  );
}

/** Logs in and out once; throws with the server's reason when the login fails. */
export async function verifyImapLogin(endpoint: Endpoint, password: string): Promise<void> {
  const client = createImapClient(endpoint, password);
  client.on("error", () => {});
  try {
    await client.connect();
  } finally {
    await client.logout().catch(() => client.close());
  }
}

export function isIp(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(":");
}
