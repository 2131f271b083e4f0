/**
 * Step 5 of provisioning: find the account's IMAP and SMTP servers. The relay's own autoconfig
 * (EDGE_SERVER's origin) is asked first; then Delta Chat's order for the address's domain (all
 * probed in parallel, each with a timeout, the earliest source in that order wins); then host/port
 * guessing. A choice counts only once real IMAP and SMTP logins succeeded.
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
import { checkCandidates, type LoginCheckers } from "./login_check.ts";

const log = logger("autodiscover");

/** Largest autoconfig document read (real ones are a few KiB). */
const MAX_DOCUMENT_BYTES = 256 * 1024;
/** Outlook redirects followed at most (Delta Chat's limit). */
const MAX_REDIRECTS = 10;

/** Test seams and limits. */
export interface AutodiscoverDeps extends LoginCheckers {
  readonly fetch: typeof fetch;
  /** Time limit of one document probe (connect + body) in ms. */
  readonly probeTimeoutMs: number;
  /** Time limit of one login attempt in ms. */
  readonly loginTimeoutMs?: number;
  readonly allowPlaintext: boolean;
  readonly events?: EventSink | undefined;
}

/** One place that may publish server settings. */
export interface Source {
  readonly name: string;
  readonly url: string;
  readonly format: "mozilla" | "outlook";
}

/** The relay's own autoconfig document (may be `http://127.0.0.1:port` in tests). */
export function relaySource(relay: RelayTarget): Source {
  return {
    name: "relay autoconfig",
    url: `${relay.origin}/.well-known/autoconfig/mail/config-v1.1.xml`,
    format: "mozilla",
  };
}

/** The autoconfig URLs for `addr`, in Delta Chat's order (docs/protocol-notes.md §10). */
export function domainSources(addr: string): Source[] {
  const domain = addr.slice(addr.lastIndexOf("@") + 1);
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

/** Host/port guesses: imap./smtp., mail., the bare domain; each SSL (993/465) then STARTTLS. */
export function guessCandidates(addr: string): ServerCandidates {
  const domain = addr.slice(addr.lastIndexOf("@") + 1);
  const hosts = [[`imap.${domain}`, `smtp.${domain}`], [`mail.${domain}`, `mail.${domain}`], [
    domain,
    domain,
  ]];
  const imap: Endpoint[] = [];
  const smtp: Endpoint[] = [];
  for (const [ih, sh] of hosts) {
    imap.push({ host: ih, port: 993, security: "ssl", user: addr });
    imap.push({ host: ih, port: 143, security: "starttls", user: addr });
    smtp.push({ host: sh, port: 465, security: "ssl", user: addr });
    smtp.push({ host: sh, port: 587, security: "starttls", user: addr });
  }
  return { imap, smtp };
}

/** Reads a body up to `max` bytes; throws when it is longer. */
async function boundedText(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > max) throw new Error(`document too large (${declared} bytes)`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > max) throw new Error(`document too large (${bytes.length} bytes)`);
  return new TextDecoder().decode(bytes);
}

/** Fetches one source (following Outlook redirects) and parses it; rejects on any failure. */
export async function fetchSource(
  src: Source,
  addr: string,
  deps: Pick<AutodiscoverDeps, "fetch" | "probeTimeoutMs">,
  signal: AbortSignal,
): Promise<ServerCandidates> {
  const limit = AbortSignal.any([signal, AbortSignal.timeout(deps.probeTimeoutMs)]);
  let url = src.url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const res = await deps.fetch(url, { signal: limit, redirect: "follow" });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    const text = await boundedText(res, MAX_DOCUMENT_BYTES);
    if (src.format === "mozilla") return parseMozillaAutoconfig(text, addr);
    const next = outlookRedirect(text);
    if (!next) return parseOutlookAutodiscover(text, addr);
    url = next;
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects`);
}

/** Discovers and verifies the servers of `addr`; throws StartupError when nothing works. */
export async function discoverServers(
  addr: string,
  password: string,
  relay: RelayTarget,
  deps: AutodiscoverDeps,
): Promise<ServerParams> {
  let last = 0;
  const progress = (p: number, comment: string) => {
    last = Math.max(p, last); // never backwards; provision() reports 0 (failed) itself
    deps.events?.publish({ kind: "ConfigureProgress", progress: last, comment });
  };
  const checkOpts = {
    allowPlaintext: deps.allowPlaintext,
    timeoutMs: deps.loginTimeoutMs ?? 30_000,
  };
  const report: string[] = [];
  const tryCandidates = async (name: string, found: ServerCandidates) => {
    const checked = await checkCandidates(found, password, deps, checkOpts);
    if (checked.params) return checked.params;
    report.push(`${name}: ${checked.failures.slice(0, 4).join("; ") || "nothing usable"}`);
    return undefined;
  };
  const abort = new AbortController();
  const attempt = async (src: Source, pending: Promise<ServerCandidates>) => {
    const t0 = performance.now();
    let found: ServerCandidates;
    try {
      found = await pending;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      log.info(`${src.name} unavailable`, { url: src.url, reason });
      report.push(`${src.name}: ${reason}`);
      return undefined;
    }
    log.info(`found server settings via ${src.name}`, {
      url: src.url,
      imap: found.imap.length,
      smtp: found.smtp.length,
      ms: Math.round(performance.now() - t0),
    });
    progress(700, `verifying the servers from ${src.name}`);
    return await tryCandidates(src.name, found);
  };
  try {
    // The relay first and alone: it answers for every chatmail relay, and then no third party
    // (the address domain's hosts, Thunderbird's ISPDB) learns about this account.
    const first = relaySource(relay);
    progress(100, `checking ${first.name}`);
    const fromRelay = await attempt(first, fetchSource(first, addr, deps, abort.signal));
    if (fromRelay) return chosen(fromRelay, first.name, progress);
    // Then Delta Chat's sources, all probed at once; results are taken in order, so an earlier
    // source that answers late still wins over a later one that answered first.
    const sources = domainSources(addr).filter((s) => s.url !== first.url);
    const pending = sources.map((s) => fetchSource(s, addr, deps, abort.signal));
    pending.forEach((p) => p.catch(() => {})); // rejections are read in order below
    for (const [i, src] of sources.entries()) {
      progress(200 + 50 * i, `checking ${src.name}`);
      const params = await attempt(src, pending[i]);
      if (params) return chosen(params, src.name, progress);
    }
    abort.abort();
    progress(800, "guessing server names");
    const guessed = await tryCandidates("guessing", guessCandidates(addr));
    if (guessed) return chosen(guessed, "guessing", progress);
  } finally {
    abort.abort();
  }
  throw new StartupError(
    `Autodiscovery found no working IMAP and SMTP server for ${addr} (${report.join(" | ")})`,
  );
}

function chosen(
  params: ServerParams,
  via: string,
  progress: (p: number, c: string) => void,
): ServerParams {
  progress(900, "mail servers verified");
  log.info("mail servers chosen", {
    via,
    imap: describeEndpoint(params.imap),
    smtp: describeEndpoint(params.smtp),
  });
  return params;
}
