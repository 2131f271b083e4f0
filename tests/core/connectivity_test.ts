/** Tests of ConnectivityMonitor: events only on change. */
import assert from "node:assert/strict";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import type { GatewayEvent } from "../../src/events/types.ts";

Deno.test("ConnectivityMonitor publishes ConnectivityChanged only when the level changes", () => {
  const seen: GatewayEvent[] = [];
  const m = new ConnectivityMonitor({ publish: (e) => seen.push(e) }, 0);
  m.set(2000);
  m.set(2000);
  m.set(4000);
  assert.equal(m.level(), 4000);
  assert.deepEqual(seen, [
    { kind: "ConnectivityChanged", connectivity: 2000 },
    { kind: "ConnectivityChanged", connectivity: 4000 },
  ]);
});
