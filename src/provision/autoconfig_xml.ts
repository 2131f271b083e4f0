/**
 * Parses Thunderbird autoconfig (Mozilla `clientConfig`) and Outlook autodiscover XML into
 * server candidates. Pure and tolerant: entries without host, port or user are dropped.
 */
import type { Endpoint, Security } from "../transport/server_params.ts";

/** IMAP and SMTP candidates in document order. */
export interface ServerCandidates {
  readonly imap: Endpoint[];
  readonly smtp: Endpoint[];
}

function tag(block: string, name: string): string | undefined {
  const m = new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`, "i").exec(block);
  return m ? decodeEntities(m[1].trim()) : undefined;
}

function decodeEntities(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(
    /&apos;/g,
    "'",
  )
    .replace(/&amp;/g, "&");
}

function substitute(value: string, addr: string): string {
  const [local, domain] = addr.split("@");
  return value.replace(/%EMAILADDRESS%/g, addr).replace(/%EMAILLOCALPART%/g, local)
    .replace(/%EMAILDOMAIN%/g, domain);
}

function security(socketType: string | undefined): Security | undefined {
  switch ((socketType ?? "").toUpperCase()) {
    case "SSL":
      return "ssl";
    case "STARTTLS":
      return "starttls";
    case "PLAIN":
      return "plain";
    default:
      return undefined;
  }
}

function endpoint(
  host?: string,
  port?: string,
  sec?: Security,
  user?: string,
): Endpoint | undefined {
  const p = Number(port);
  if (!host || !user || !Number.isInteger(p) || p < 1 || p > 65535) return undefined;
  return {
    host: host.toLowerCase(),
    port: p,
    security: sec ?? (p === 993 || p === 465 ? "ssl" : "starttls"),
    user,
  };
}

/** Parses a Mozilla autoconfig document for `addr`. */
export function parseMozillaAutoconfig(xml: string, addr: string): ServerCandidates {
  const out: ServerCandidates = { imap: [], smtp: [] };
  const re = /<(incomingServer|outgoingServer)\s+type="(\w+)"[^>]*>([\s\S]*?)<\/\1>/gi;
  for (const m of xml.matchAll(re)) {
    const [, kind, type, block] = m;
    const list = kind.toLowerCase() === "incomingserver"
      ? (type.toLowerCase() === "imap" ? out.imap : undefined)
      : (type.toLowerCase() === "smtp" ? out.smtp : undefined);
    if (!list) continue;
    const host = tag(block, "hostname");
    const user = tag(block, "username");
    const e = endpoint(
      host && substitute(host, addr),
      tag(block, "port"),
      security(tag(block, "socketType")),
      user && substitute(user, addr),
    );
    if (e) list.push(e);
  }
  return out;
}

/** Parses an Outlook autodiscover response (`<Protocol>` entries with Type IMAP/SMTP). */
export function parseOutlookAutodiscover(xml: string, addr: string): ServerCandidates {
  const out: ServerCandidates = { imap: [], smtp: [] };
  for (const m of xml.matchAll(/<Protocol>([\s\S]*?)<\/Protocol>/gi)) {
    const block = m[1];
    const type = (tag(block, "Type") ?? "").toUpperCase();
    const ssl = (tag(block, "SSL") ?? "on").toLowerCase();
    const e = endpoint(
      tag(block, "Server"),
      tag(block, "Port"),
      ssl === "off" ? "plain" : undefined,
      tag(block, "LoginName") ?? addr,
    );
    if (!e) continue;
    if (type === "IMAP") out.imap.push(e);
    if (type === "SMTP") out.smtp.push(e);
  }
  return out;
}

/** The redirect target of an Outlook autodiscover response, if it is one. */
export function outlookRedirect(xml: string): string | undefined {
  return tag(xml, "RedirectUrl");
}
