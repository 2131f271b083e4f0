/**
 * The TLS settings every mail connection uses: certificate and host-name verification always on,
 * TLS 1.2 or newer, SNI with the host name. One place, so imapflow and nodemailer cannot drift.
 *
 * Trusting a private CA (a test relay's self-signed certificate, an operator's own CA): set
 * `DENO_CERT=/path/to/ca.pem` in the daemon's environment. The Deno runtime reads it at start and
 * adds those certificates to the root store that `node:tls` and `Deno.connectTls` use (implicit-TLS
 * IMAP runs over the latter, slab_transport.ts), so imapflow and nodemailer verify against it
 * without a `ca:` option (measured with Deno 2.9.5 against Postfix/Dovecot:
 * implicit TLS and STARTTLS, IMAP and SMTP, for `127.0.0.1` and `localhost`; without it the
 * handshake fails with "self-signed certificate", and a trusted certificate whose SAN does not
 * name the host fails with ERR_TLS_CERT_ALTNAME_INVALID). It must be in the environment before
 * the process starts: the root store is built once, at the first handshake. What it may hold:
 * the issuing CA of the server's certificate, or a self-signed server certificate that says
 * `basicConstraints=CA:FALSE` (like the test relay's). A self-signed certificate made with
 * openssl's defaults (CA:TRUE) is refused as "self-signed certificate" even when listed, and a
 * CA-issued leaf listed without its CA gives "unable to verify the first certificate".
 */

/** Options passed to `node:tls` through imapflow's `tls` and nodemailer's `tls` settings. */
export interface TlsOptions {
  readonly rejectUnauthorized: true;
  readonly minVersion: "TLSv1.2";
  /** SNI name; absent for IP literals (RFC 6066 forbids them), verification still checks the IP. */
  readonly servername?: string;
}

/** True for an IPv4 or IPv6 literal (`127.0.0.1`, `::1`, `[::1]`). */
export function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}

/** The verified TLS options for a connection to `host`. */
export function tlsOptionsFor(host: string): TlsOptions {
  return isIpAddress(host)
    ? { rejectUnauthorized: true, minVersion: "TLSv1.2" }
    : { rejectUnauthorized: true, minVersion: "TLSv1.2", servername: host };
}
