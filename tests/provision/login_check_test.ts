/** Tests of login_check.ts: order, parallelism, time limits and the failure report. */
import assert from "node:assert/strict";
import { checkCandidates } from "../../src/provision/login_check.ts";
import type { Endpoint } from "../../src/transport/server_params.ts";

const e = (host: string, port: number, security: Endpoint["security"] = "ssl"): Endpoint => ({
  host,
  port,
  security,
  user: "a@x.test",
});

Deno.test("checkCandidates() takes the first working entry of each list", async () => {
  const r = await checkCandidates(
    { imap: [e("a", 993), e("b", 993)], smtp: [e("c", 465), e("d", 465)] },
    "pw",
    {
      verifyImap: (x) => x.host === "b" ? Promise.resolve() : Promise.reject(new Error("refused")),
      verifySmtp: () => Promise.resolve(),
    },
    { allowPlaintext: false, timeoutMs: 1000 },
  );
  assert.equal(r.params?.imap.host, "b");
  assert.equal(r.params?.smtp.host, "c");
  assert.deepEqual(r.failures, ["IMAP a:993/ssl: refused"]);
});

Deno.test("checkCandidates() gives up on a login that does not answer in time", async () => {
  const never = () => new Promise<void>(() => {});
  const r = await checkCandidates(
    { imap: [e("slow", 993), e("fast", 143, "starttls")], smtp: [e("s", 465)] },
    "pw",
    {
      verifyImap: (x) => x.host === "slow" ? never() : Promise.resolve(),
      verifySmtp: () => Promise.resolve(),
    },
    { allowPlaintext: false, timeoutMs: 50 },
  );
  assert.equal(r.params?.imap.host, "fast");
  assert.deepEqual(r.failures, ["IMAP slow:993/ssl: no answer within 50 ms"]);
});

Deno.test("checkCandidates() needs both IMAP and SMTP, and says what is missing", async () => {
  const r = await checkCandidates(
    { imap: [e("a", 993)], smtp: [] },
    "pw",
    { verifyImap: () => Promise.resolve(), verifySmtp: () => Promise.resolve() },
    { allowPlaintext: false, timeoutMs: 1000 },
  );
  assert.equal(r.params, undefined);
  assert.deepEqual(r.failures, ["no SMTP server listed"]);
});

Deno.test("checkCandidates() tries each distinct endpoint once", async () => {
  const tried: string[] = [];
  await checkCandidates(
    { imap: [e("a", 993), e("a", 993), e("b", 993)], smtp: [e("c", 465)] },
    "pw",
    {
      verifyImap: (x) => (tried.push(x.host), Promise.reject(new Error("no"))),
      verifySmtp: () => Promise.resolve(),
    },
    { allowPlaintext: false, timeoutMs: 1000 },
  );
  assert.deepEqual(tried, ["a", "b"]);
});
