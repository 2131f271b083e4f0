/** Tests of autodiscover.ts with a fake fetch and fake login checks (no network). */
import assert from "node:assert/strict";
import { parseRelayTarget } from "../../src/config.ts";
import { StartupError } from "../../src/errors.ts";
import {
  type AutodiscoverDeps,
  discoverServers,
  domainSources,
} from "../../src/provision/autodiscover.ts";
import type { Endpoint } from "../../src/transport/server_params.ts";

const xml = (host: string, sock = "SSL") =>
  `<clientConfig><emailProvider>
  <incomingServer type="imap"><hostname>${host}</hostname><port>993</port><socketType>${sock}</socketType><username>%EMAILADDRESS%</username></incomingServer>
  <outgoingServer type="smtp"><hostname>${host}</hostname><port>465</port><socketType>${sock}</socketType><username>%EMAILADDRESS%</username></outgoingServer>
  </emailProvider></clientConfig>`;

function deps(
  pages: Record<string, string>,
  okHosts: string[],
  extra: Partial<AutodiscoverDeps> = {},
) {
  const fetched: string[] = [];
  const d: AutodiscoverDeps = {
    fetch: ((url: string) => {
      fetched.push(url);
      const body = pages[url];
      return Promise.resolve(
        body === undefined ? new Response("no", { status: 404 }) : new Response(body),
      );
    }) as typeof fetch,
    verifyImap: (e: Endpoint) =>
      okHosts.includes(e.host) ? Promise.resolve() : Promise.reject(new Error("refused")),
    verifySmtp: (e: Endpoint) =>
      okHosts.includes(e.host) ? Promise.resolve() : Promise.reject(new Error("refused")),
    probeTimeoutMs: 1000,
    allowPlaintext: false,
    ...extra,
  };
  return { d, fetched };
}

const relay = parseRelayTarget("http://127.0.0.1:8080");

Deno.test("discoverServers() uses the relay's own autoconfig first and asks nothing else", async () => {
  const { d, fetched } = deps({
    "http://127.0.0.1:8080/.well-known/autoconfig/mail/config-v1.1.xml": xml("127.0.0.1"),
  }, ["127.0.0.1"]);
  const p = await discoverServers("a@x.test", "pw", relay, d);
  assert.equal(p.imap.host, "127.0.0.1");
  assert.equal(p.smtp.port, 465);
  assert.equal(fetched.length, 1);
});

Deno.test("discoverServers() falls back to the domain sources in Delta Chat's order", async () => {
  const [first, second] = domainSources("a@x.test");
  const { d } = deps({ [first.url]: xml("bad.x.test"), [second.url]: xml("good.x.test") }, [
    "good.x.test",
  ]);
  const p = await discoverServers("a@x.test", "pw", relay, d);
  assert.equal(p.imap.host, "good.x.test");
});

Deno.test("discoverServers() never picks plaintext unless allowed, then guesses, then fails clearly", async () => {
  const [first] = domainSources("a@x.test");
  const { d } = deps({ [first.url]: xml("plain.x.test", "plain") }, ["plain.x.test"]);
  await assert.rejects(
    discoverServers("a@x.test", "pw", relay, d),
    (e: Error) => e instanceof StartupError && /no working IMAP and SMTP server/.test(e.message),
  );
  const guessed = deps({}, ["imap.x.test", "smtp.x.test"]);
  const p = await discoverServers("a@x.test", "pw", relay, guessed.d);
  assert.deepEqual([p.imap.host, p.imap.port, p.smtp.host, p.smtp.port], [
    "imap.x.test",
    993,
    "smtp.x.test",
    465,
  ]);
});

Deno.test("domainSources() percent-encodes the address but keeps dots", () => {
  assert.match(domainSources("a.b@x.test")[0].url, /emailaddress=a\.b%40x\.test$/);
});
