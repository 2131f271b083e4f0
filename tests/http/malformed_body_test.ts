/**
 * Over real sockets (the daemon's own server): a request body cut short by a half-close, broken
 * chunked encoding, and a huge batch in a large body are the client's fault: 400 (or -32600),
 * logged at debug, never a 500 or an ERROR line.
 */
import assert from "node:assert/strict";
import { serveGuarded } from "../../src/http/guarded_server.ts";
import { DEFAULT_SERVER_LIMITS } from "../../src/http/server_limits.ts";
import { setLogLevel, setLogSink } from "../../src/log.ts";
import { testApp } from "./_app.ts";

/** Sends `request` (its parts a moment apart, so the handler sees the first one alone). */
async function exchange(
  port: number,
  request: string | string[],
  halfClose: boolean,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  for (const [i, part] of [request].flat().entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    const bytes = new TextEncoder().encode(part);
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  }
  if (halfClose) await conn.closeWrite();
  let answer = "";
  const buf = new Uint8Array(65_536);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    answer += new TextDecoder().decode(buf.subarray(0, n));
    const end = answer.indexOf("\r\n\r\n");
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(answer)?.[1] ?? -1);
    if (end >= 0 && length >= 0 && answer.length >= end + 4 + length) break;
  }
  conn.close();
  return answer;
}

const head = (path: string, extra: string) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;

Deno.test("a truncated or badly chunked body is answered 400, logged at debug only", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  setLogLevel("debug");
  const t = testApp();
  const server = serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    limits: DEFAULT_SERVER_LIMITS,
    handler: t.app.serverFetch,
  });
  const port = server.addr.port;
  try {
    const cases: [string, string | string[]][] = [
      ["rpc, declared length, half-closed", head("/rpc", "Content-Length: 100\r\n") + '{"jsonrpc"'],
      [
        "rpc, large declared length, half-closed",
        head("/rpc", "Content-Length: 200000\r\n") + "[" + "{},".repeat(1000),
      ],
      [
        "rpc, chunked, half-closed",
        head("/rpc", "Transfer-Encoding: chunked\r\n") + "a\r\n[{},{},{}",
      ],
      [
        "rpc, a bad chunk after a good one",
        [head("/rpc", "Transfer-Encoding: chunked\r\n") + "3\r\n[{}\r\n", "zz\r\n]\r\n0\r\n\r\n"],
      ],
      ["auth, declared length, half-closed", head("/auth", "Content-Length: 50\r\n") + '{"fi'],
    ];
    for (const [name, request] of cases) {
      const answer = await exchange(port, request, true);
      assert.match(answer, /^HTTP\/1\.1 400 /, `${name}: ${answer}`);
    }
    // Broken framing in what arrives with the headers is refused by Deno's parser itself: the
    // connection is closed without an answer (and a debug line), never a 500.
    const early = await exchange(
      port,
      head("/rpc", "Transfer-Encoding: chunked\r\n") + "zz\r\n[]\r\n0\r\n\r\n",
      false,
    );
    assert.doesNotMatch(early, /^HTTP\/1\.1 5/);
    assert.deepEqual(lines.filter((l) => / (ERROR|WARN) /.test(l)), []);
    assert.ok(lines.some((l) => / DEBUG .*request body unreadable/.test(l)));
  } finally {
    setLogLevel("info");
    setLogSink(prev);
    await server.shutdown();
    t.close();
  }
});

Deno.test("a 1 MiB body holding a batch of 300k members is refused before parsing, in a small answer", async () => {
  const t = testApp();
  const server = serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    limits: DEFAULT_SERVER_LIMITS,
    handler: t.app.serverFetch,
  });
  try {
    const body = `[${"{},".repeat(300_000)}{}]`;
    const answer = await exchange(
      server.addr.port,
      head("/rpc", `Content-Length: ${body.length}\r\nConnection: close\r\n`) + body,
      false,
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    const json = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
    assert.equal(json.error.code, -32600);
    assert.match(json.error.message, /a batch may hold at most 100 requests/);
    assert.ok(answer.length < 1_000, `answer of ${answer.length} bytes`);
  } finally {
    await server.shutdown();
    t.close();
  }
});
