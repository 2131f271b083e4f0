/** IMAP and SMTP endpoints of the account, as discovered at provisioning and stored. */

/** How a connection is secured: implicit TLS, STARTTLS, or (only when allowed) none. */
export type Security = "ssl" | "starttls" | "plain";

export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly security: Security;
  /** Login name (usually the full address). */
  readonly user: string;
}

export interface ServerParams {
  readonly imap: Endpoint;
  readonly smtp: Endpoint;
}

/** Login credentials; the password is never logged. */
export interface Credentials {
  readonly user: string;
  readonly password: string;
}

/** `host:port/security` for logs (no credentials). */
export function describeEndpoint(e: Endpoint): string {
  return `${e.host}:${e.port}/${e.security}`;
}
