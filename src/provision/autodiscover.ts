/**
 * Step 5 of provisioning: find the account's IMAP and SMTP servers. The relay's own autoconfig
 * (from EDGE_SERVER) is asked first; then Delta Chat's order for the address's domain (probed in
 * parallel, earliest source wins); then host/port guessing. Every choice is proven by real IMAP
 * and SMTP logins before it is accepted.
 */
import type { RelayTarget } from "../config.ts";
import { StartupError } from "../errors.ts";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { describeEndpoint, type Endpoint, type ServerParams } from "../transport/server_params.ts";
import {
  outlookRedirect,
  parseMozillaAutoconfig,
  parseOutlookAutodiscover,
  type ServerCandidates,
} from "./autoconfig_xml.ts";

const log = logger("autodiscover");

/** Test seams and limits. */
export interface AutodiscoverDeps {
  readonly fetch: typeof fetch;
  readonly verifyImap: (e: Endpoint, password: string) => Promise<void>;
  readonly verifySmtp: (e: Endpoint, password: string) => Promise<void>;
  readonly probeTimeoutMs: number;
  readonly allowPlaintext: boolean;
  readonly events?: EventSink;
}

interface Source {
  readonly name: string;
  readonly url: string;
  readonly format: "mozilla" | "outlook";
}

/** The autoconfig URLs for `addr`, in Delta Chat's order (protocols.md §9). */
export function domainSources(addr: string): Source[] {
  const domain = addr.split("@")[1];
  const q = encodeURIComponent(addr).replace(/%2E/gi, ".");
  return [
    {
      name: "autoconfig subdomain",
      url: `https://autoconfig.${domain}/mail/config-v1.1.xml?emailaddress=${q}`,
      format: "mozilla",
    },
    {
      name: "well-known autoconfig",
      url: `https://${domain}/.well-known/autoconfig/mail/config-v1.1.xml`,
      format: "mozilla",
    },
    {
      name: "autodiscover",
      url: `https://${domain}/autodiscover/autodiscover.xml`,
      format: "outlook",
    },
    {
      name: "autodiscover subdomain",
      url: `https://autodiscover.${domain}/autodiscover/autodiscover.xml`,
      format: "outlook",
    },
    { name: "ISPDB", url: `https://autoconfig.thunderbird.net/v1.1/${domain}`, format: "mozilla" },
  ];
}

/** Host/port guesses when no document is found: imap./smtp., mail., bare domain; SSL then STARTTLS. */
export function guessCandidates(addr: string): ServerCandidates {
  const domain = addr.split("@")[1];
  const imap: Endpoint[] = [];
  const smtp: Endpoint[] = [];
  for (
    const [ih, sh] of [[`imap.${domain}`, `smtp.${domain}`], [`mail.${domain}`, `mail.${domain}`], [
      domain,
      domain,
    ]]
  ) {
    imap.push({ host: ih, port: 993, security: "ssl", user: addr }, {
      host: ih,
      port: 143,
      security: "starttls",
      user: addr,
    });
    smtp.push({ host: sh, port: 465, security: "ssl", user: addr }, {
      host: sh,
      port: 587,
      security: "starttls",
      user: addr,
    });
  }
  return { imap, smtp };
}

async function fetchSource(
  src: Source,
  addr: string,
  deps: AutodiscoverDeps,
  signal: AbortSignal,
): Promise<ServerCandidates | undefined> {
  let url = src.url;
  for (let hop = 0; hop < 10; hop++) {
    const res = await deps.fetch(url, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(deps.probeTimeoutMs)]),
    });
    const text = await res.text();
    if (!res.ok) return undefined;
    if (src.format === "mozilla") return parseMozillaAutoconfig(text, addr);
    const next = outlookRedirect(text);
    if (!next) return parseOutlookAutodiscover(text, addr);
    url = next;
  }
  return undefined;
}

async function firstWorking(
  list: Endpoint[],
  password: string,
  verify: AutodiscoverDeps["verifyImap"],
  kind: string,
): Promise<Endpoint | undefined> {
  for (const e of list) {
    try {
      await verify(e, password);
      log.info(`${kind} login verified`, { server: describeEndpoint(e) });
      return e;
    } catch (err) {
      log.info(`${kind} login failed`, {
        server: describeEndpoint(e),
        reason: err instanceof Error ? err.message : String(err),
      });
    }
  }
  return undefined;
}

/** Verifies IMAP and SMTP candidates in parallel; resolves with the first working pair. */
async function verifyCandidates(
  c: ServerCandidates,
  password: string,
  deps: AutodiscoverDeps,
): Promise<ServerParams | undefined> {
  const ok = (e: Endpoint) => deps.allowPlaintext || e.security !== "plain";
  const [imap, smtp] = await Promise.all([
    firstWorking(c.imap.filter(ok), password, deps.verifyImap, "IMAP"),
    firstWorking(c.smtp.filter(ok), password, deps.verifySmtp, "SMTP"),
  ]);
  return imap && smtp ? { imap, smtp } : undefined;
}

/** Discovers and verifies the servers of `addr`; throws StartupError when nothing works. */
export async function discoverServers(
  addr: string,
  password: string,
  relay: RelayTarget,
  deps: AutodiscoverDeps,
): Promise<ServerParams> {
  const progress = (p: number, comment: string) =>
    deps.events?.publish({ kind: "ConfigureProgress", progress: p, comment });
  const abort = new AbortController();
  const relaySource: Source = {
    name: "relay autoconfig",
    url: `${relay.origin}/.well-known/autoconfig/mail/config-v1.1.xml`,
    format: "mozilla",
  };
  const tried: string[] = [];
  const attempt = async (src: Source, pending: Promise<ServerCandidates | undefined>) => {
    const found = await pending.catch((err) => {
      log.debug(`${src.name} unavailable`, {
        url: src.url,
        reason: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    });
    tried.push(src.name);
    if (!found || (found.imap.length === 0 && found.smtp.length === 0)) return undefined;
    log.info(`found server settings via ${src.name}`, { url: src.url });
    return await verifyCandidates(found, password, deps);
  };
  try {
    progress(100, "fetching the relay's autoconfig");
    const fromRelay = await attempt(
      relaySource,
      fetchSource(relaySource, addr, deps, abort.signal),
    );
    if (fromRelay) return done(fromRelay, progress);
    progress(300, "probing the address domain's autoconfig");
    const sources = domainSources(addr);
    const pending = sources.map((s) => fetchSource(s, addr, deps, abort.signal));
    for (const [i, src] of sources.entries()) {
      const found = await attempt(src, pending[i]);
      if (found) return done(found, progress);
    }
    progress(600, "guessing server names");
    const guessed = await verifyCandidates(guessCandidates(addr), password, deps);
    if (guessed) return done(guessed, progress);
  } finally {
    abort.abort();
  }
  progress(0, "no working mail server found");
  throw new StartupError(
    `Autodiscovery found no working IMAP and SMTP server for ${addr} (tried: ${
      tried.join(", ")
    }, guessing)`,
  );
}

function done(params: ServerParams, progress: (p: number, c: string) => void): ServerParams {
  progress(1000, "mail servers configured");
  log.info("mail servers chosen", {
    imap: describeEndpoint(params.imap),
    smtp: describeEndpoint(params.smtp),
  });
  return params;
}
