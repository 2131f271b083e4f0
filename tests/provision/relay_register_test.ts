/** Tests of relay_register.ts: chatmail `POST /new` answers and failures. */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import { registerOnRelay } from "../../src/provision/relay_register.ts";
import { fakeFetch, hang } from "./_fakes.ts";

const URL_NEW = "https://relay.example/new";

Deno.test("registerOnRelay() POSTs an empty body and returns the lower-cased address", async () => {
  let body: unknown = "unset";
  const f = fakeFetch({
    [URL_NEW]: (init) => {
      body = init?.body;
      return Promise.resolve(Response.json({ email: "AbcDefGhi@Relay.Example", password: "p" }));
    },
  });
  const acc = await registerOnRelay(URL_NEW, f.fetch);
  assert.deepEqual(f.calls, [`POST ${URL_NEW}`]);
  assert.equal(body, undefined);
  assert.deepEqual(acc, { email: "abcdefghi@relay.example", password: "p" });
});

Deno.test("registerOnRelay() reads the relay's clock from the answer's Date header", async () => {
  const date = "Tue, 01 Dec 2026 10:00:00 GMT";
  const f = fakeFetch({
    [URL_NEW]: () =>
      Promise.resolve(
        Response.json({ email: "a@relay.example", password: "p" }, { headers: { date } }),
      ),
  });
  const acc = await registerOnRelay(URL_NEW, f.fetch);
  assert.equal(acc.relayTime, Date.parse(date));
  const none = fakeFetch({
    [URL_NEW]: () =>
      Promise.resolve(
        Response.json({ email: "a@relay.example", password: "p" }, { headers: { date: "soon" } }),
      ),
  });
  assert.equal((await registerOnRelay(URL_NEW, none.fetch)).relayTime, undefined, "unreadable");
});

Deno.test("registerOnRelay() reports the relay's reason, a non-JSON refusal and a bad answer", async () => {
  const refused = fakeFetch({ [URL_NEW]: { status: 429, body: '{"reason":"too many accounts"}' } });
  await assert.rejects(
    registerOnRelay(URL_NEW, refused.fetch),
    (e: Error) =>
      e instanceof StartupError &&
      e.message === `Relay registration at ${URL_NEW} was refused (HTTP 429): too many accounts`,
  );
  const html = fakeFetch({ [URL_NEW]: { status: 502, body: "<html>Bad Gateway</html>" } });
  await assert.rejects(
    registerOnRelay(URL_NEW, html.fetch),
    /refused \(HTTP 502\): <html>Bad Gateway/,
  );
  const odd = fakeFetch({ [URL_NEW]: '{"email":"nope","password":"x"}' });
  await assert.rejects(
    registerOnRelay(URL_NEW, odd.fetch),
    /without a valid "email" \(is EDGE_SERVER a chatmail relay\?\)/,
  );
  const nopw = fakeFetch({ [URL_NEW]: '{"email":"a@b.c"}' });
  await assert.rejects(registerOnRelay(URL_NEW, nopw.fetch), /without a "password"/);
});

Deno.test("registerOnRelay() names the URL and the cause when the relay is unreachable or silent", async () => {
  const down =
    (() =>
      Promise.reject(new TypeError("error sending request: Connection refused"))) as typeof fetch;
  await assert.rejects(
    registerOnRelay(URL_NEW, down),
    (e: Error) =>
      e instanceof StartupError && e.cause instanceof TypeError &&
      /^Relay registration at https:\/\/relay\.example\/new failed: error sending request: Connection refused/
        .test(e.message),
  );
  const silent = fakeFetch({ [URL_NEW]: hang() });
  await assert.rejects(
    registerOnRelay(URL_NEW, silent.fetch, 50),
    /failed: no answer within 50 ms/,
  );
});
