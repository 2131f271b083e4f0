/**
 * Proves server candidates with real logins before provisioning stores them: IMAP and SMTP are
 * checked in parallel, each list in order, the first working entry wins; failures keep reasons.
 */
import { logger } from "../log.ts";
import { verifyImapLogin } from "../transport/imap_client.ts";
import { describeEndpoint, type Endpoint, type ServerParams } from "../transport/server_params.ts";
import { verifySmtpLogin } from "../transport/smtp_client.ts";
import type { ServerCandidates } from "./autoconfig_xml.ts";
import { allowedEndpoint } from "./server_params.ts";

const log = logger("provision");

/** Logs in once (TLS verified) and resolves, or rejects with the reason. */
export type LoginCheck = (endpoint: Endpoint, password: string) => Promise<void>;

/** The two checks; tests inject fakes. */
export interface LoginCheckers {
  readonly verifyImap: LoginCheck;
  readonly verifySmtp: LoginCheck;
}

/** The real checks over the network (transport/imap_client.ts, transport/smtp_client.ts). */
export const networkLoginCheckers: LoginCheckers = {
  verifyImap: verifyImapLogin,
  verifySmtp: verifySmtpLogin,
};

/** How candidates are checked. */
export interface CheckOptions {
  readonly allowPlaintext: boolean;
  /** Upper bound for one login attempt in ms. */
  readonly timeoutMs: number;
}

/** The outcome of checking one candidate set: the pair, or why nothing worked. */
export interface CheckResult {
  readonly params?: ServerParams;
  /** `"IMAP host:port/security: reason"` per failed attempt, in order. */
  readonly failures: readonly string[];
}

function withTimeout(p: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function unique(list: readonly Endpoint[]): Endpoint[] {
  const seen = new Set<string>();
  return list.filter((e) => {
    const key = `${describeEndpoint(e)}/${e.user}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

async function firstWorking(
  kind: "IMAP" | "SMTP",
  list: readonly Endpoint[],
  password: string,
  check: LoginCheck,
  opts: CheckOptions,
  failures: string[],
): Promise<Endpoint | undefined> {
  let skipped = 0;
  for (const e of unique(list)) {
    const server = describeEndpoint(e);
    if (!allowedEndpoint(e, opts.allowPlaintext)) {
      log.debug(`${kind} candidate skipped: plaintext is not allowed`, { server });
      skipped++;
      continue;
    }
    const t0 = performance.now();
    try {
      await withTimeout(check(e, password), opts.timeoutMs);
      log.info(`${kind} login verified`, { server, ms: Math.round(performance.now() - t0) });
      return e;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      failures.push(`${kind} ${server}: ${reason}`);
      log.info(`${kind} login failed`, { server, reason, ms: Math.round(performance.now() - t0) });
    }
  }
  if (skipped > 0 && skipped === unique(list).length) {
    failures.push(`${kind}: only plaintext servers offered and EDGE_ALLOW_PLAINTEXT_MAIL is off`);
  }
  return undefined;
}

/** Checks IMAP and SMTP candidates in parallel; the result has both endpoints or neither. */
export async function checkCandidates(
  candidates: ServerCandidates,
  password: string,
  checkers: LoginCheckers,
  opts: CheckOptions,
): Promise<CheckResult> {
  const imapFailures: string[] = [];
  const smtpFailures: string[] = [];
  const [imap, smtp] = await Promise.all([
    firstWorking("IMAP", candidates.imap, password, checkers.verifyImap, opts, imapFailures),
    firstWorking("SMTP", candidates.smtp, password, checkers.verifySmtp, opts, smtpFailures),
  ]);
  const failures = [...imapFailures, ...smtpFailures];
  if (imap === undefined && candidates.imap.length === 0) failures.push("no IMAP server listed");
  if (smtp === undefined && candidates.smtp.length === 0) failures.push("no SMTP server listed");
  return imap && smtp ? { params: { imap, smtp }, failures } : { failures };
}
