// @ts-check
// HTTP(S) front of the test relay, the way a chatmail relay answers clients:
//   POST /new (and /cgi-bin/newemail.py)   create an account now → {"email","password","dclogin_url"}
//        ?localpart=NAME is a test-only extension: a fixed name, 409 when it is taken
//   GET  /.well-known/autoconfig/mail/config-v1.1.xml (and /mail/config-v1.1.xml)   autoconfig
//   GET  /dcaccount   "DCACCOUNT:https://DOMAIN[:PORT]/new"
//   GET  /health      200 "ok"
// Node rather than Deno on purpose: no permissions or npm resolution, ~50 ms start, and node is
// on every machine that can run `npx deno`. usage: node http.mjs DIR/relay.json
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const logFile = `${cfg.dir}/log/http.log`;
const usersDir = `${cfg.dir}/users.d`;

const LOCALPART_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";
// chatmail draws passwords from letters, digits and all ASCII punctuation; only a hash is stored
const PASSWORD_CHARS = LOCALPART_CHARS +
  "ABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/** @param {string} line */
function log(line) {
  fs.appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
}

/** Uniformly random string over `alphabet` (rejection sampling). */
function randomString(/** @type {string} */ alphabet, /** @type {number} */ length) {
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/** Dovecot's {SSHA256} scheme: base64(sha256(password + salt) + salt). */
function ssha256(/** @type {string} */ password) {
  const salt = crypto.randomBytes(8);
  const digest = crypto.createHash("sha256").update(password, "utf8").update(salt).digest();
  return `{SSHA256}${Buffer.concat([digest, salt]).toString("base64")}`;
}

class HttpError extends Error {
  constructor(/** @type {number} */ status, /** @type {string} */ message) {
    super(message);
    this.status = status;
  }
}

/**
 * Creates an account: one Dovecot passwd-file per address (Dovecot re-reads a changed file at
 * most once a second, so one shared file would miss accounts created just before a login).
 * @param {string | null} localpart
 */
function createAccount(localpart) {
  let user = localpart;
  if (user !== null) {
    if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(user)) throw new HttpError(400, "invalid localpart");
    if (fs.existsSync(`${usersDir}/${user}@${cfg.domain}`)) {
      throw new HttpError(409, "account exists");
    }
  } else {
    do user = randomString(LOCALPART_CHARS, 9); while (
      fs.existsSync(`${usersDir}/${user}@${cfg.domain}`)
    );
  }
  const email = `${user}@${cfg.domain}`;
  const password = randomString(PASSWORD_CHARS, 12);
  const tmp = `${usersDir}/.${email}.${process.pid}`;
  fs.writeFileSync(tmp, `${email}:${ssha256(password)}::::::\n`, { mode: 0o644 });
  fs.renameSync(tmp, `${usersDir}/${email}`); // atomic: Dovecot never sees half a file
  return { email, password };
}

/** A dclogin: URL for the account; ic=3 accepts the self-signed certificate. */
function dcloginUrl(/** @type {string} */ email, /** @type {string} */ password) {
  const q = encodeURIComponent;
  return `dclogin:${email}?p=${q(password)}&v=1&ih=${q(cfg.mailHost)}&ip=${cfg.imapsPort}&is=ssl` +
    `&sh=${q(cfg.mailHost)}&sp=${cfg.smtpsPort}&ss=ssl&ic=3`;
}

/** Mozilla autoconfig XML; TLS entries first, as a client should prefer them. */
function autoconfigXml() {
  const server = (
    /** @type {string} */ kind,
    /** @type {string} */ type,
    /** @type {number} */ port,
    /** @type {string} */ socketType,
  ) =>
    `    <${kind} type="${type}">\n      <hostname>${cfg.mailHost}</hostname>\n` +
    `      <port>${port}</port>\n      <socketType>${socketType}</socketType>\n` +
    `      <authentication>password-cleartext</authentication>\n` +
    `      <username>%EMAILADDRESS%</username>\n    </${kind}>\n`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<clientConfig version="1.1">\n` +
    `  <emailProvider id="${cfg.domain}">\n    <domain>${cfg.domain}</domain>\n` +
    `    <displayName>${cfg.domain} (disposable test relay)</displayName>\n` +
    `    <displayShortName>${cfg.domain}</displayShortName>\n` +
    server("incomingServer", "imap", cfg.imapsPort, "SSL") +
    server("incomingServer", "imap", cfg.imapPort, "STARTTLS") +
    server("incomingServer", "imap", cfg.imapPort, "plain") +
    server("outgoingServer", "smtp", cfg.smtpsPort, "SSL") +
    server("outgoingServer", "smtp", cfg.submissionPort, "STARTTLS") +
    server("outgoingServer", "smtp", cfg.submissionPort, "plain") +
    `  </emailProvider>\n</clientConfig>\n`;
}

/** Request handler for one scheme ("http" or "https"). */
function handler(/** @type {string} */ scheme) {
  return (/** @type {http.IncomingMessage} */ req, /** @type {http.ServerResponse} */ res) => {
    const url = new URL(req.url ?? "/", `${scheme}://localhost`);
    const send = (
      /** @type {number} */ status,
      /** @type {string} */ type,
      /** @type {string} */ body,
      extra = {},
    ) => {
      res.writeHead(status, {
        "Content-Type": type,
        "Content-Length": Buffer.byteLength(body),
        ...extra,
      });
      res.end(body);
      log(`${scheme} ${req.method} ${url.pathname} -> ${status}`);
    };
    const path = url.pathname;
    if (path === "/health") return send(200, "text/plain", "ok\n");
    if (path === "/new" || path === "/cgi-bin/newemail.py") {
      if (req.method !== "POST") return send(405, "text/plain", "use POST\n", { Allow: "POST" });
      req.resume();
      req.on("end", () => {
        try {
          const account = createAccount(url.searchParams.get("localpart"));
          log(`created ${account.email}`);
          const body = { ...account, dclogin_url: dcloginUrl(account.email, account.password) };
          send(200, "application/json", JSON.stringify(body));
        } catch (e) {
          const status = e instanceof HttpError ? e.status : 500;
          send(
            status,
            "application/json",
            JSON.stringify({ reason: e instanceof Error ? e.message : String(e) }),
          );
        }
      });
      return;
    }
    if (
      path === "/.well-known/autoconfig/mail/config-v1.1.xml" || path === "/mail/config-v1.1.xml"
    ) {
      return send(200, "application/xml; charset=utf-8", autoconfigXml());
    }
    if (path === "/dcaccount") {
      const port = cfg.httpsPort === 443 ? "" : `:${cfg.httpsPort}`;
      return send(200, "text/plain", `DCACCOUNT:https://${cfg.domain}${port}/new\n`);
    }
    send(404, "text/plain", "not found\n");
  };
}

const tlsOptions = { cert: fs.readFileSync(cfg.certFile), key: fs.readFileSync(cfg.keyFile) };
const servers = [
  http.createServer(handler("http")).listen(cfg.httpPort, cfg.bind),
  https.createServer(tlsOptions, handler("https")).listen(cfg.httpsPort, cfg.bind),
];
for (const server of servers) {
  server.on("error", (e) => {
    log(`fatal: ${e.message}`);
    process.exit(1);
  });
}
log(`listening on ${cfg.bind}:${cfg.httpPort} (http) and :${cfg.httpsPort} (https)`);
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
