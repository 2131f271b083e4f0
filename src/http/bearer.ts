/** The `Authorization: Bearer` scheme both the API tokens and the viewer tokens use. */

/** The challenge of every 401 answer (RFC 6750), before any `error=` parameter. */
export const TOKEN_CHALLENGE = 'Bearer realm="edge-gateway"';

/** The bearer token of an `Authorization` header, if it has the `Bearer` scheme. */
export function bearerToken(header: string | null | undefined): string | undefined {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  return m?.[1];
}
