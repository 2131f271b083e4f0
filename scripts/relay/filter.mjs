// @ts-check
// Before-queue SMTP proxy of the test relay (Postfix smtpd_proxy_filter on submission and SMTPS):
// it takes the whole mail transaction, applies filter_check.mjs, and either refuses the mail
// (523 / 500) or re-injects it into Postfix's "reinject" smtpd and answers with its reply.
// Node on purpose: it starts in ~50 ms and needs no packages; node is present wherever npx is.
//
// usage: node filter.mjs LISTEN_SOCKET REINJECT_SOCKET LOG_FILE [MAX_BYTES]
import fs from "node:fs";
import net from "node:net";
import { checkOutgoing } from "./filter_check.mjs";

const [listenPath, reinjectPath, logFile, maxBytesArg] = process.argv.slice(2);
if (!listenPath || !reinjectPath || !logFile) {
  console.error("usage: node filter.mjs LISTEN_SOCKET REINJECT_SOCKET LOG_FILE");
  process.exit(2);
}
// Postfix's message_size_limit (default 30 MiB) plus the room its own headers take.
const MAX_BYTES = Number(maxBytesArg ?? 31457280) + 1024 * 1024;
const NAME = "filter.relay.test";

/** @param {string} line */
function log(line) {
  fs.appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
}

/** Reads CRLF-terminated lines from a socket (latin1, so bytes survive unchanged). */
class LineReader {
  /** @param {net.Socket} socket */
  constructor(socket) {
    this.buf = "";
    /** @type {string[]} */
    this.lines = [];
    /** @type {((line: string | null) => void) | null} */
    this.waiter = null;
    this.closed = false;
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => {
      this.buf += chunk;
      let nl;
      while ((nl = this.buf.indexOf("\r\n")) >= 0) {
        this.lines.push(this.buf.slice(0, nl));
        this.buf = this.buf.slice(nl + 2);
      }
      this.wake();
    });
    const close = () => {
      this.closed = true;
      this.wake();
    };
    socket.on("end", close);
    socket.on("close", close);
    socket.on("error", close);
  }
  wake() {
    if (!this.waiter) return;
    const line = this.lines.length ? /** @type {string} */ (this.lines.shift()) : null;
    if (line === null && !this.closed) return;
    const w = this.waiter;
    this.waiter = null;
    w(line);
  }
  /** @returns {Promise<string | null>} the next line, or null once the peer is gone */
  next() {
    return new Promise((resolve) => {
      this.waiter = resolve;
      this.wake();
    });
  }
}

/** Reads one (possibly multi-line) SMTP reply and returns it joined with CRLF. */
async function readReply(/** @type {LineReader} */ reader) {
  const lines = [];
  for (;;) {
    const line = await reader.next();
    if (line === null) throw new Error("reinject service closed the connection");
    lines.push(line);
    if (line.length < 4 || line[3] !== "-") return lines.join("\r\n");
  }
}

/**
 * Hands an accepted mail to Postfix's reinject smtpd; resolves to the reply for the client.
 * @param {{ from: string, params: string, rcpts: string[], data: string }} mail
 */
function reinject(mail) {
  return new Promise((resolve) => {
    const socket = net.connect(reinjectPath);
    const reader = new LineReader(socket);
    const fail = (/** @type {unknown} */ e) => {
      socket.destroy();
      log(`reinject failed: ${e instanceof Error ? e.message : e}`);
      resolve("451 4.3.0 Error: test relay filter could not re-inject the mail");
    };
    socket.on("error", fail);
    socket.setTimeout(60_000, () => fail(new Error("no answer from the reinject service in 60 s")));
    const step = async (/** @type {string | null} */ cmd, /** @type {string} */ want) => {
      if (cmd !== null) socket.write(`${cmd}\r\n`, "latin1");
      const reply = await readReply(reader);
      if (!reply.startsWith(want)) throw Object.assign(new Error(reply), { reply });
      return reply;
    };
    (async () => {
      await step(null, "220");
      await step(`EHLO ${NAME}`, "250");
      await step(`MAIL FROM:<${mail.from}>${mail.params}`, "250");
      for (const r of mail.rcpts) await step(`RCPT TO:<${r}>`, "250");
      await step("DATA", "354");
      const stuffed = mail.data.replace(/^\./gm, "..");
      socket.write(
        stuffed.endsWith("\r\n") || stuffed === "" ? stuffed : `${stuffed}\r\n`,
        "latin1",
      );
      const done = await step(".", "250");
      socket.end("QUIT\r\n");
      resolve(done);
    })().catch((e) => {
      if (e && typeof e.reply === "string") {
        socket.destroy();
        resolve(e.reply);
      } else fail(e);
    });
  });
}

/** MAIL FROM parameters worth passing on to the reinject service. */
function keptParams(/** @type {string} */ params) {
  return params.split(/\s+/).filter((p) => /^(BODY=|SMTPUTF8$)/i.test(p)).map((p) => ` ${p}`)
    .join("");
}

/** Reads the DATA section up to the lone "."; resolves to null when the peer went away. */
async function readData(/** @type {LineReader} */ reader) {
  const lines = [];
  let size = 0;
  for (;;) {
    const line = await reader.next();
    if (line === null) return null;
    if (line === ".") return { data: lines.length ? `${lines.join("\r\n")}\r\n` : "", size };
    size += line.length + 2;
    if (size <= MAX_BYTES) lines.push(line.startsWith(".") ? line.slice(1) : line);
  }
}

/** Runs one SMTP session with Postfix's proxy client: one transaction at a time, no pipelining. */
async function session(/** @type {net.Socket} */ socket) {
  const reader = new LineReader(socket);
  const say = (/** @type {string} */ text) => socket.write(`${text}\r\n`, "latin1");
  /** @type {{ from: string, params: string, rcpts: string[] } | null} */
  let tx = null;
  say(`220 ${NAME} ESMTP test relay filter`);
  for (;;) {
    const line = await reader.next();
    if (line === null) return;
    const verb = line.split(" ", 1)[0].toUpperCase();
    const mail = /^MAIL FROM:\s*<([^>]*)>(.*)$/i.exec(line);
    const rcpt = /^RCPT TO:\s*<([^>]*)>/i.exec(line);
    switch (verb) {
      case "EHLO":
        say(`250-${NAME}\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250 SIZE ${MAX_BYTES}`);
        break;
      case "HELO":
        say(`250 ${NAME}`);
        break;
      case "NOOP":
        say("250 2.0.0 Ok");
        break;
      case "RSET":
        tx = null;
        say("250 2.0.0 Ok");
        break;
      case "QUIT":
        socket.end("221 2.0.0 Bye\r\n");
        return;
      case "MAIL":
        if (!mail) say("501 5.5.4 Syntax: MAIL FROM:<address>");
        else {
          tx = { from: mail[1], params: keptParams(mail[2]), rcpts: [] };
          say("250 2.1.0 Ok");
        }
        break;
      case "RCPT":
        if (!tx) say("503 5.5.1 Error: need MAIL command");
        else if (!rcpt) say("501 5.5.4 Syntax: RCPT TO:<address>");
        else {
          tx.rcpts.push(rcpt[1]);
          say("250 2.1.5 Ok");
        }
        break;
      case "DATA": {
        if (!tx || tx.rcpts.length === 0) {
          say("503 5.5.1 Error: need RCPT command");
          break;
        }
        say("354 End data with <CR><LF>.<CR><LF>");
        const body = await readData(reader);
        if (body === null) return;
        const msg = { ...tx, data: body.data };
        tx = null;
        if (body.size > MAX_BYTES) {
          say("552 5.3.4 Error: message too large");
          break;
        }
        const refusal = checkOutgoing(msg.from, msg.rcpts, msg.data);
        log(
          `from=<${msg.from}> rcpts=${msg.rcpts.length} size=${body.size} ${refusal ?? "accepted"}`,
        );
        say(refusal ?? await reinject(msg));
        break;
      }
      default:
        say("502 5.5.2 Error: command not recognized");
    }
  }
}

const server = net.createServer((socket) => {
  socket.on("error", () => socket.destroy());
  session(socket).catch((e) => {
    log(`session error: ${e instanceof Error ? e.stack : e}`);
    socket.destroy();
  });
});
fs.rmSync(listenPath, { force: true });
server.listen(listenPath, () => {
  fs.chmodSync(listenPath, 0o666); // Postfix's smtpd (user postfix) connects to it
  log(`listening on ${listenPath}, re-injecting into ${reinjectPath}`);
});
server.on("error", (e) => {
  log(`fatal: ${e.message}`);
  process.exit(1);
});
const stop = () => {
  fs.rmSync(listenPath, { force: true });
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
