/** Tests of ConnectivityMonitor: 0 before configured, events only on change. */
import assert from "node:assert/strict";
import { Connectivity } from "../../src/constants.ts";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import type { GatewayEvent } from "../../src/events/types.ts";

Deno.test("ConnectivityMonitor starts at 0 (not configured) without publishing anything", () => {
  const seen: GatewayEvent[] = [];
  const m = new ConnectivityMonitor({ publish: (e) => seen.push(e) });
  assert.equal(m.level(), Connectivity.NOT_CONFIGURED);
  assert.equal(new ConnectivityMonitor({ publish: () => {} }, 1000).level(), 1000);
  assert.deepEqual(seen, []);
});

Deno.test("ConnectivityMonitor publishes ConnectivityChanged only when the level changes", () => {
  const seen: GatewayEvent[] = [];
  const m = new ConnectivityMonitor({ publish: (e) => seen.push(e) }, 0);
  m.set(2000);
  m.set(2000);
  m.set(4000);
  m.set(4000);
  m.set(1000);
  assert.equal(m.level(), 1000);
  assert.deepEqual(seen, [
    { kind: "ConnectivityChanged", connectivity: 2000 },
    { kind: "ConnectivityChanged", connectivity: 4000 },
    { kind: "ConnectivityChanged", connectivity: 1000 },
  ]);
});

Deno.test("ConnectivityMonitor keeps each link's mail problem until that link reports otherwise", () => {
  const m = new ConnectivityMonitor({ publish: () => {} }, 1000);
  assert.equal(m.mailProblem(), undefined);
  const smtp = { error: "tls_clock" as const, detail: "smtp: check the system clock" };
  const imap = { error: "tls_clock" as const, detail: "imap: check the system clock" };
  m.report("smtp", smtp);
  assert.deepEqual(m.mailProblem(), smtp);
  m.report("imap", imap);
  assert.deepEqual(m.mailProblem(), imap, "IMAP's first");
  m.report("imap", undefined);
  assert.deepEqual(m.mailProblem(), smtp, "SMTP's is not cleared by IMAP connecting");
  m.report("smtp", undefined);
  assert.equal(m.mailProblem(), undefined);
});
