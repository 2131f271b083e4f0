/** A second look at a certificate `node:tls` could not verify: a rustls handshake names the fault. */
import type { Endpoint } from "./server_params.ts";
import { type TlsClockFault, tlsClockFault } from "./tls_clock.ts";

/** A TLS connection as the probe needs it (`Deno.TlsConn` fits). */
export interface ProbeConn {
  handshake(): Promise<unknown>;
  close(): void;
}

/** Opens a verified TLS connection (`Deno.connectTls` fits; tests pass fakes). */
export type TlsConnect = (o: { hostname: string; port: number }) => Promise<ProbeConn>;

/** Longest the probe waits for the handshake. */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * For an implicit-TLS endpoint: connects with `Deno.connectTls` (rustls, the same roots and
 * `DENO_CERT` as `node:tls`), finishes the handshake and closes, sending nothing. Resolves the
 * clock fault rustls names, or undefined (no fault, another failure, a STARTTLS endpoint, or no
 * answer within the timeout). Never rejects.
 */
export async function probeTlsClock(
  endpoint: Endpoint,
  connect: TlsConnect = Deno.connectTls,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<TlsClockFault | undefined> {
  if (endpoint.security !== "ssl") return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), timeoutMs));
  const attempt = (async () => {
    const conn = await connect({
      hostname: endpoint.host.replace(/^\[|\]$/g, ""),
      port: endpoint.port,
    });
    try {
      await conn.handshake();
    } finally {
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
    return undefined;
  })().catch((err: unknown) => tlsClockFault(err));
  try {
    return await Promise.race([attempt, late]);
  } finally {
    clearTimeout(timer);
  }
}
