/**
 * Disposable chatmail-like relays for integration tests: `startRelay()` runs
 * scripts/relay/start-relay.sh in a fresh short temp dir and `stop()` stops it by its pid files.
 *
 * TLS trust (measured with Deno 2.9.5): DENO_CERT in a `deno` process's environment makes both
 * node:tls (so imapflow and nodemailer) and Deno.connectTls/fetch verify the relay's self-signed
 * leaf certificate, for 127.0.0.1, localhost and the relay's domain. A file holding several PEM
 * certificates works too. Without it: "self-signed certificate" / "UnknownIssuer". Setting
 * DENO_CERT with Deno.env.set() inside a running process only helps before its first TLS
 * handshake (the root store is built once, lazily), so do not rely on that. Hence:
 * - a subprocess (e.g. the daemon) gets `relay.tlsEnv()` in its env;
 * - scripts/test.sh makes one test certificate, exports it as DENO_CERT for the test process and
 *   as EDGE_TEST_TLS_CERT/EDGE_TEST_TLS_KEY, and every relay started here then uses it, so
 *   in-process clients verify every relay without extra options.
 */
import { makeTempDir } from "./temp.ts";

/** Where the relay scripts live. */
export const RELAY_SCRIPTS_DIR = new URL("../../scripts/relay/", import.meta.url).pathname;

/** True when relay-backed tests must not run (`scripts/test.sh --unit` sets EDGE_TEST_NO_RELAY=1);
 * use as `Deno.test({ name, ignore: NO_RELAY, fn })`. */
export const NO_RELAY = Deno.env.get("EDGE_TEST_NO_RELAY") === "1";

/** Test domains that scripts/test.sh maps to 127.0.0.1 inside its network namespace. */
export const TEST_DOMAINS = (Deno.env.get("EDGE_TEST_DOMAINS") ?? "_relay.test _relay2.test")
  .split(/\s+/).filter(Boolean);

/** Options of {@link startRelay}; each maps to a start-relay.sh option. */
export interface StartRelayOptions {
  /** Mail domain (default `_relay.test`). */
  domain?: string;
  /** Refuse unencrypted mail like chatmail's filtermail (default true). */
  filter?: boolean;
  /** Port base N (ports N+143, N+993, ...); default: a free base chosen by the script. */
  portBase?: number;
  /** Advertise XCHATMAIL (default true). */
  chatmailCap?: boolean;
  /** Strip Received/User-Agent and blank Subject on submission (default true). */
  headerCleanup?: boolean;
  /** Hand mail for a domain to another local relay's MX port, e.g. `{ "_relay2.test": 21025 }`. */
  routes?: Record<string, number>;
  /** Largest mail the relay accepts and advertises in SMTP SIZE (default 31457280). */
  messageSizeLimit?: number;
  /** More start-relay.sh arguments, verbatim. */
  args?: string[];
}

/** An account created with `POST /new`. */
export interface RelayAccount {
  email: string;
  password: string;
  dclogin_url: string;
}

/** Process ids of a running relay (null when that part is not running). */
export interface RelayPids {
  postfix: number | null;
  dovecot: number | null;
  http: number | null;
  filter: number | null;
}

/** A running relay. Stop it with `stop()` or let `await using` do it. */
export interface Relay extends AsyncDisposable {
  readonly dir: string;
  readonly domain: string;
  /** Host clients connect to (127.0.0.1). */
  readonly host: string;
  readonly imapPort: number;
  readonly imapsPort: number;
  readonly submissionPort: number;
  readonly smtpsPort: number;
  readonly mxPort: number;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** PEM file of the relay's TLS certificate (a self-signed leaf). */
  readonly certFile: string;
  /** The certificate itself, e.g. for `tls: { ca: [relay.certPem] }`. */
  readonly certPem: string;
  /** `http://127.0.0.1:<httpPort>`. */
  readonly httpOrigin: string;
  /** `POST` here to create an account. */
  readonly newUrl: string;
  readonly autoconfigUrl: string;
  /** Maildir root: `<mailDir>/<address>/{new,cur}`. */
  readonly mailDir: string;
  /** Current pids (updated by stopMail/startMail). */
  readonly pids: RelayPids;
  /** Environment for a subprocess that must trust this relay's certificate. */
  tlsEnv(): Record<string, string>;
  /** Creates an account through `POST /new`. */
  register(): Promise<RelayAccount>;
  /** Stops Postfix and Dovecot only; ports, accounts and mail stay. */
  stopMail(): Promise<void>;
  /** Starts Postfix and Dovecot again after {@link stopMail}, on the same ports. */
  startMail(): Promise<void>;
  /** Stops everything by pid and deletes the directory; safe to call twice. */
  stop(): Promise<void>;
}

interface RelayJson {
  dir: string;
  domain: string;
  mailHost: string;
  imapPort: number;
  imapsPort: number;
  submissionPort: number;
  smtpsPort: number;
  mxPort: number;
  httpPort: number;
  httpsPort: number;
  httpOrigin: string;
  newUrl: string;
  autoconfigUrl: string;
  certFile: string;
  mailDir: string;
  pids: RelayPids;
}

/** Runs one of the relay scripts and throws with its output when it fails. */
async function runScript(name: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("bash", {
    args: [RELAY_SCRIPTS_DIR + name, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    throw new Error(`${name} ${args.join(" ")} failed (exit ${out.code}):\n${text}`);
  }
}

function scriptArgs(opts: StartRelayOptions): string[] {
  const args = ["--domain", opts.domain ?? "_relay.test"];
  if (opts.portBase !== undefined) args.push("--port-base", String(opts.portBase));
  if (opts.filter === false) args.push("--no-filter");
  if (opts.chatmailCap === false) args.push("--no-chatmail-cap");
  if (opts.headerCleanup === false) args.push("--no-header-cleanup");
  if (opts.messageSizeLimit !== undefined) {
    args.push("--message-size-limit", String(opts.messageSizeLimit));
  }
  for (const [domain, port] of Object.entries(opts.routes ?? {})) {
    args.push("--route", `${domain}=${port}`);
  }
  const cert = Deno.env.get("EDGE_TEST_TLS_CERT");
  const key = Deno.env.get("EDGE_TEST_TLS_KEY");
  if (cert && key) args.push("--tls-cert", cert, "--tls-key", key);
  return [...args, ...(opts.args ?? [])];
}

async function readState(dir: string): Promise<RelayJson> {
  return JSON.parse(await Deno.readTextFile(`${dir}/relay.json`)) as RelayJson;
}

/** Starts a relay in a fresh directory under /tmp and resolves once every port answers. */
export async function startRelay(opts: StartRelayOptions = {}): Promise<Relay> {
  const tmp = await makeTempDir("relay");
  try {
    await runScript("start-relay.sh", [tmp.path, ...scriptArgs(opts)]);
  } catch (e) {
    await tmp.cleanup();
    throw e;
  }
  const state = await readState(tmp.path);
  const certPem = await Deno.readTextFile(state.certFile);
  let stopped = false;
  const pids = { ...state.pids };
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      await runScript("stop-relay.sh", [tmp.path, "--purge"]);
    } finally {
      await tmp.cleanup();
    }
  };
  return {
    dir: tmp.path,
    domain: state.domain,
    host: state.mailHost,
    imapPort: state.imapPort,
    imapsPort: state.imapsPort,
    submissionPort: state.submissionPort,
    smtpsPort: state.smtpsPort,
    mxPort: state.mxPort,
    httpPort: state.httpPort,
    httpsPort: state.httpsPort,
    certFile: state.certFile,
    certPem,
    httpOrigin: state.httpOrigin,
    newUrl: state.newUrl,
    autoconfigUrl: state.autoconfigUrl,
    mailDir: state.mailDir,
    pids,
    tlsEnv: () => ({ DENO_CERT: state.certFile }),
    async register() {
      const res = await fetch(state.newUrl, { method: "POST" });
      const body = await res.text();
      if (!res.ok) throw new Error(`POST ${state.newUrl} answered ${res.status}: ${body}`);
      return JSON.parse(body) as RelayAccount;
    },
    async stopMail() {
      await runScript("stop-relay.sh", [tmp.path, "--mail-only"]);
      pids.postfix = pids.dovecot = null;
    },
    async startMail() {
      await runScript("start-relay.sh", [tmp.path, "--mail-only"]);
      Object.assign(pids, (await readState(tmp.path)).pids);
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
