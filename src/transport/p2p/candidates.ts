/** Candidate addresses: parsing `host:port` / `[v6]:port`, and this host's interface addresses. */

/** A UDP address a peer may be reached at. */
export interface Candidate {
  hostname: string;
  port: number;
}

/** `ip:port` or `[ipv6]:port` (the offer's form). */
export function formatCandidate(c: Candidate): string {
  return c.hostname.includes(":") ? `[${c.hostname}]:${c.port}` : `${c.hostname}:${c.port}`;
}

const V4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const V6 = /^[0-9a-fA-F:.]{2,45}$/;

/** Parses a candidate literal (IP addresses only: an offer never names a host to resolve). */
export function parseCandidate(text: string): Candidate | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  if (m[1] !== undefined) {
    return V6.test(m[1]) && m[1].includes(":") ? { hostname: m[1], port } : undefined;
  }
  return m[2] !== undefined && V4.test(m[2]) ? { hostname: m[2], port } : undefined;
}

/**
 * The addresses of this host's interfaces at `port` (loopback and link-local left out unless
 * the endpoint is bound to one), the bound address alone when it is a specific one.
 */
export function interfaceCandidates(boundHost: string, port: number): Candidate[] {
  if (boundHost !== "0.0.0.0" && boundHost !== "::") return [{ hostname: boundHost, port }];
  const out: Candidate[] = [];
  for (const i of Deno.networkInterfaces()) {
    if (boundHost === "0.0.0.0" && i.family !== "IPv4") continue;
    if (i.address.startsWith("127.") || i.address === "::1" || /^fe80:/i.test(i.address)) continue;
    out.push({ hostname: i.address, port });
  }
  return out;
}
