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

const ENTITIES: Record<string, string> = {
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&apos;": "'",
  "&amp;": "&",
};

function decodeEntities(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp);/g, (m) => ENTITIES[m]);
}

/** Text of the first `<name>` element inside `block`, trimmed and entity-decoded. */
function tag(block: string, name: string): string | undefined {
  const m = new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`, "i").exec(block);
  return m ? decodeEntities(m[1].trim()) : undefined;
}

/** Replaces Thunderbird's placeholders with parts of `addr`. */
export function substitutePlaceholders(value: string, addr: string): string {
  const at = addr.lastIndexOf("@");
  const local = addr.slice(0, at);
  const domain = addr.slice(at + 1);
  return value.replace(/%EMAILADDRESS%/g, addr).replace(/%EMAILLOCALPART%/g, local)
    .replace(/%EMAILDOMAIN%/g, domain);
}

/** `socketType` → security; anything else (or nothing) means "decide by port". */
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
  host: string | undefined,
  port: string | undefined,
  sec: Security | undefined,
  user: string | undefined,
): Endpoint | undefined {
  const p = Number(port);
  if (!host || !user || !/^\d+$/.test(port ?? "") || p < 1 || p > 65535) return undefined;
  return {
    host: host.toLowerCase(),
    port: p,
    // "Automatic": implicit TLS on the implicit-TLS ports, STARTTLS elsewhere (never plaintext).
    security: sec ?? (p === 993 || p === 465 || p === 443 ? "ssl" : "starttls"),
    user,
  };
}

/** Parses a Mozilla autoconfig document for `addr`. */
export function parseMozillaAutoconfig(xml: string, addr: string): ServerCandidates {
  const out: ServerCandidates = { imap: [], smtp: [] };
  const re = /<(incomingServer|outgoingServer)\b([^>]*)>([\s\S]*?)<\/\1>/gi;
  for (const [, kind, attrs, block] of xml.matchAll(re)) {
    const type = (/\btype\s*=\s*["']([^"']*)["']/i.exec(attrs)?.[1] ?? "").toLowerCase();
    const list = kind.toLowerCase() === "incomingserver"
      ? (type === "imap" ? out.imap : undefined)
      : (type === "smtp" ? out.smtp : undefined);
    if (!list) continue;
    const host = tag(block, "hostname");
    const user = tag(block, "username");
    const e = endpoint(
      host && substitutePlaceholders(host, addr),
      tag(block, "port"),
      security(tag(block, "socketType")),
      user && substitutePlaceholders(user, addr),
    );
    if (e) list.push(e);
  }
  return out;
}

/**
 * Parses an Outlook autodiscover response (`<Protocol>` entries with Type IMAP/SMTP, Server,
 * Port, SSL on/off, optional LoginName). `SSL` on (the default) means "decide by port".
 */
export function parseOutlookAutodiscover(xml: string, addr: string): ServerCandidates {
  const out: ServerCandidates = { imap: [], smtp: [] };
  for (const [, block] of xml.matchAll(/<Protocol>([\s\S]*?)<\/Protocol>/gi)) {
    const type = (tag(block, "Type") ?? "").toUpperCase();
    const ssl = (tag(block, "SSL") ?? "on").toLowerCase();
    const e = endpoint(
      tag(block, "Server"),
      tag(block, "Port"),
      ssl === "off" ? "plain" : undefined,
      tag(block, "LoginName") || addr,
    );
    if (!e) continue;
    if (type === "IMAP") out.imap.push(e);
    if (type === "SMTP") out.smtp.push(e);
  }
  return out;
}

/** The redirect target of an Outlook autodiscover response, if it is one. */
export function outlookRedirect(xml: string): string | undefined {
  return tag(xml, "RedirectUrl") || undefined;
}
