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
