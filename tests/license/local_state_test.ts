/** Tests of LicenseLocalState: the clock high-water mark and the deactivations kept here. */
import assert from "node:assert/strict";
import { LicenseLocalState } from "../../src/license/local_state.ts";
import { ConfigKey } from "../../src/store/mod.ts";

function memory(initial: Record<string, string> = {}) {
  const map = new Map(Object.entries(initial));
  let writes = 0;
  return {
    map,
    writes: () => writes,
    get: (k: string) => map.get(k),
    set: (k: string, v: string) => void (writes++, map.set(k, v)),
  };
}

Deno.test("advance() moves the mark forward, writing at most once a minute, never back", () => {
  const state = memory();
  const local = new LicenseLocalState(state);
  assert.equal(local.highWater(), undefined);
  local.advance(1_000_000);
  assert.equal(state.map.get(ConfigKey.LICENSE_CLOCK_HIGH_WATER), "1000000");
  local.advance(1_000_000 + 59_999);
  assert.equal(state.writes(), 1, "less than a minute later: not written");
  local.advance(1_000_000 + 60_000);
  assert.equal(local.highWater(), 1_060_000);
  local.advance(5);
  assert.equal(local.highWater(), 1_060_000, "an earlier clock never lowers it");
  assert.equal(new LicenseLocalState(state).highWater(), 1_060_000, "read back at start");
  local.setHighWater(42);
  assert.equal(local.highWater(), 42, "only an explicit set (the issuer's time) lowers it");
});

Deno.test("deactivations are kept per license id and survive junk in the database", () => {
  const state = memory({ [ConfigKey.LICENSE_DEACTIVATED]: "[not json" });
  const local = new LicenseLocalState(state);
  assert.equal(local.deactivatedIssuedAt("L1"), undefined);
  local.markDeactivated("L1", 100);
  local.markDeactivated("L1", 50);
  local.markDeactivated("L2", 7);
  assert.equal(local.deactivatedIssuedAt("L1"), 100, "the latest deactivated copy counts");
  local.clearDeactivated("L1");
  assert.equal(local.deactivatedIssuedAt("L1"), undefined);
  assert.equal(local.deactivatedIssuedAt("L2"), 7);
  assert.equal(
    new LicenseLocalState(memory({ license_clock_high_water: "x" })).highWater(),
    undefined,
  );
});
