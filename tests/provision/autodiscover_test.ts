/** Tests of autodiscover.ts with a fake fetch and fake login checks (no network). */
import assert from "node:assert/strict";
import { parseRelayTarget } from "../../src/config.ts";
import { StartupError } from "../../src/errors.ts";
import {
  type AutodiscoverDeps,
  discoverServers,
  domainSources,
  guessCandidates,
} from "../../src/provision/autodiscover.ts";
import {
  autoconfigXml as xml,
  type FakeAnswer,
  fakeFetch,
  fakeLogins,
  hang,
  later,
} from "./_fakes.ts";

const ADDR = "a@x.test";
const relay = parseRelayTarget("http://127.0.0.1:8080");
const RELAY_URL = "http://127.0.0.1:8080/.well-known/autoconfig/mail/config-v1.1.xml";

function deps(
  pages: Record<string, FakeAnswer>,
  okHosts: string[],
  extra: Partial<AutodiscoverDeps> = {},
) {
  const f = fakeFetch(pages);
  const logins = fakeLogins(okHosts);
  const d: AutodiscoverDeps = {
    fetch: f.fetch,
    verifyImap: logins.verifyImap,
    verifySmtp: logins.verifySmtp,
    probeTimeoutMs: 1000,
    allowPlaintext: false,
    ...extra,
  };
  return { d, fetched: f.calls, tried: logins.tried };
}

Deno.test("discoverServers() uses the relay's own autoconfig first and asks nobody else", async () => {
  const { d, fetched } = deps({ [RELAY_URL]: xml("127.0.0.1") }, ["127.0.0.1"]);
  const p = await discoverServers(ADDR, "pw", relay, d);
  assert.equal(p.imap.host, "127.0.0.1");
  assert.equal(p.smtp.port, 465);
  assert.deepEqual(fetched, [`GET ${RELAY_URL}`]);
});

Deno.test("discoverServers() probes the domain sources in parallel, in Delta Chat's order", async () => {
  const [first, second] = domainSources(ADDR);
  const { d, fetched } = deps(
    { [first.url]: xml("bad.x.test"), [second.url]: xml("good.x.test") },
    [
      "good.x.test",
    ],
  );
  const p = await discoverServers(ADDR, "pw", relay, d);
  assert.equal(p.imap.host, "good.x.test");
  // The relay alone first, then all five domain sources at once.
  assert.deepEqual(
    fetched,
    [RELAY_URL, ...domainSources(ADDR).map((s) => s.url)].map((u) => `GET ${u}`),
  );
});

Deno.test("discoverServers(): an earlier source that answers late wins over a later one that answered first", async () => {
  const [first, second] = domainSources(ADDR);
  const { d } = deps({
    [first.url]: later(150, xml("early.x.test")),
    [second.url]: xml("late.x.test"),
  }, ["early.x.test", "late.x.test"]);
  const p = await discoverServers(ADDR, "pw", relay, d);
  assert.equal(p.imap.host, "early.x.test");
});

Deno.test("discoverServers(): a hanging probe costs one probe timeout, then the next source wins", async () => {
  const [first, second] = domainSources(ADDR);
  // One timeline of probe starts and probe timeouts (order, not durations).
  const timeline: string[] = [];
  const never = hang() as (init: RequestInit | undefined) => Promise<Response>;
  const hangs = (name: string): FakeAnswer => (init) => {
    timeline.push(`start ${name}`);
    init?.signal?.addEventListener("abort", () => {
      const reason = init.signal!.reason as Error;
      timeline.push(`${reason.name === "TimeoutError" ? "timeout" : "abort"} ${name}`);
    }, { once: true });
    return never(init);
  };
  const answers = (name: string, body: string): FakeAnswer => () => {
    timeline.push(`start ${name}`);
    return Promise.resolve(new Response(body));
  };
  const { d } = deps(
    {
      [RELAY_URL]: hangs("relay"),
      [first.url]: hangs("first"),
      [second.url]: answers("second", xml("ok.x.test")),
    },
    ["ok.x.test"],
    { probeTimeoutMs: 100 },
  );
  const p = await discoverServers(ADDR, "pw", relay, d);
  assert.equal(p.imap.host, "ok.x.test");
  // The relay alone, until its probe timed out; then the domain sources in parallel: the second
  // had answered before the first timed out, so the hang cost one timeout, not one per source.
  assert.deepEqual(timeline, [
    "start relay",
    "timeout relay",
    "start first",
    "start second",
    "timeout first",
  ]);
});

Deno.test("discoverServers() never picks plaintext unless allowed, then guesses, then fails clearly", async () => {
  const [first] = domainSources(ADDR);
  const plain = deps({ [first.url]: xml("plain.x.test", "plain") }, ["plain.x.test"]);
  await assert.rejects(
    discoverServers(ADDR, "pw", relay, plain.d),
    (e: Error) =>
      e instanceof StartupError &&
      /no working IMAP and SMTP server for a@x\.test/.test(e.message) &&
      /autoconfig subdomain: IMAP: only plaintext servers offered/.test(e.message) &&
      /relay autoconfig: HTTP 404/.test(e.message),
  );
  assert.ok(plain.tried.every((t) => !t.includes("plain.x.test")), "plaintext was never tried");
  const allowed = deps({ [first.url]: xml("plain.x.test", "plain") }, ["plain.x.test"], {
    allowPlaintext: true,
  });
  assert.equal((await discoverServers(ADDR, "pw", relay, allowed.d)).imap.security, "plain");
  const guessed = deps({}, ["imap.x.test", "smtp.x.test"]);
  const p = await discoverServers(ADDR, "pw", relay, guessed.d);
  assert.deepEqual([p.imap.host, p.imap.port, p.smtp.host, p.smtp.port], [
    "imap.x.test",
    993,
    "smtp.x.test",
    465,
  ]);
});

Deno.test("discoverServers() follows Outlook redirects", async () => {
  const [, , outlook] = domainSources(ADDR);
  const target = "https://redirect.x.test/autodiscover.xml";
  const { d } = deps({
    [outlook.url]: "<Autodiscover><Response><Account><Action>redirectUrl</Action>" +
      `<RedirectUrl>${target}</RedirectUrl></Account></Response></Autodiscover>`,
    [target]: `<Autodiscover><Response><Account>
      <Protocol><Type>IMAP</Type><Server>mx.x.test</Server><Port>993</Port></Protocol>
      <Protocol><Type>SMTP</Type><Server>mx.x.test</Server><Port>465</Port></Protocol>
      </Account></Response></Autodiscover>`,
  }, ["mx.x.test"]);
  const p = await discoverServers(ADDR, "pw", relay, d);
  assert.deepEqual(p.smtp, { host: "mx.x.test", port: 465, security: "ssl", user: ADDR });
});

Deno.test("discoverServers() checks IMAP and SMTP in parallel and publishes monotonic progress", async () => {
  const events: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const slow = () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return new Promise<void>((r) => setTimeout(() => (inFlight--, r()), 30));
  };
  const { d } = deps({ [RELAY_URL]: xml("127.0.0.1") }, [], {
    verifyImap: slow,
    verifySmtp: slow,
    events: { publish: (e) => e.kind === "ConfigureProgress" && events.push(e.progress) },
  });
  await discoverServers(ADDR, "pw", relay, d);
  assert.equal(maxInFlight, 2);
  assert.deepEqual(events, [...events].sort((a, b) => a - b));
  assert.equal(events.at(-1), 900);
});

Deno.test("domainSources() percent-encodes the address but keeps dots", () => {
  assert.match(domainSources("a.b@x.test")[0].url, /emailaddress=a\.b%40x\.test$/);
});

Deno.test("guessCandidates() tries imap./smtp., mail., the bare domain, SSL before STARTTLS", () => {
  const g = guessCandidates(ADDR);
  assert.deepEqual(g.imap.map((e) => `${e.host}:${e.port}/${e.security}`), [
    "imap.x.test:993/ssl",
    "imap.x.test:143/starttls",
    "mail.x.test:993/ssl",
    "mail.x.test:143/starttls",
    "x.test:993/ssl",
    "x.test:143/starttls",
  ]);
  assert.deepEqual(g.smtp.map((e) => `${e.host}:${e.port}`), [
    "smtp.x.test:465",
    "smtp.x.test:587",
    "mail.x.test:465",
    "mail.x.test:587",
    "x.test:465",
    "x.test:587",
  ]);
  assert.ok(g.imap.every((e) => e.user === ADDR));
});
