/** Tests of LicenseLocalState: the clock high-water mark and the deactivations kept here. */
import assert from "node:assert/strict";
import { LEGACY_MARK_LIMIT_MS, LicenseLocalState } from "../../src/license/local_state.ts";
import { ConfigKey } from "../../src/store/mod.ts";

const DAY = 86_400_000;
const T0 = Date.parse("2030-01-01T00:00:00Z");

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

/** A monotonic clock the test moves by hand. */
function monotonic() {
  const mono = { now: 1_000 };
  return { mono, read: () => mono.now };
}

const stored = (state: ReturnType<typeof memory>) =>
  state.map.get(ConfigKey.LICENSE_CLOCK_HIGH_WATER);
const v2 = (ms: number) => JSON.stringify({ v: 2, ms });

Deno.test("the mark starts at the issuer's time and follows min(clock, lived-through time)", () => {
  const state = memory();
  const { mono, read } = monotonic();
  const local = new LicenseLocalState(state, { issuedAt: T0, monotonic: read });
  assert.equal(local.highWater(), T0);
  mono.now += DAY;
  local.advance(T0 + DAY);
  assert.equal(local.highWater(), T0 + DAY);
  assert.equal(stored(state), v2(T0 + DAY));
  mono.now += 59_999;
  local.advance(T0 + DAY + 59_999);
  assert.equal(local.highWater(), T0 + DAY + 59_999, "kept in memory at once");
  assert.equal(state.writes(), 1, "less than a minute after the last write: not written");
  mono.now += 1;
  local.advance(T0 + DAY + 60_000);
  assert.equal(stored(state), v2(T0 + DAY + 60_000));
  mono.now += DAY;
  local.advance(T0 + DAY + 60_000 + DAY / 2);
  assert.equal(local.highWater(), T0 + DAY + 60_000 + DAY / 2, "no further than the clock");
});

Deno.test("a forward jump of the clock does not raise the mark beyond lived-through time", () => {
  const state = memory();
  const { mono, read } = monotonic();
  const local = new LicenseLocalState(state, { issuedAt: T0, monotonic: read });
  local.advance(T0 + 800 * DAY); // the clock jumped; no time went by
  assert.equal(local.highWater(), T0);
  mono.now += 3_600_000;
  local.advance(T0 + 800 * DAY + 3_600_000);
  assert.equal(local.highWater(), T0 + 3_600_000, "only the hour really lived through");
  assert.equal(stored(state), v2(T0 + 3_600_000));
  assert.equal(new LicenseLocalState(state, { monotonic: read }).highWater(), T0 + 3_600_000);
});

Deno.test("a clock set back leaves the mark where it is until the clock passes it", () => {
  const { mono, read } = monotonic();
  const local = new LicenseLocalState(memory(), { issuedAt: T0, monotonic: read });
  mono.now += 10 * DAY;
  local.advance(T0 + 10 * DAY);
  mono.now += DAY;
  local.advance(T0 + 9 * DAY); // set back two days below the lived-through T0 + 11 days
  assert.equal(local.highWater(), T0 + 10 * DAY, "never lowered");
  mono.now += DAY;
  local.advance(T0 + 10 * DAY);
  assert.equal(local.highWater(), T0 + 10 * DAY, "not raised while the clock is behind it");
  mono.now += DAY;
  local.advance(T0 + 11 * DAY);
  assert.equal(local.highWater(), T0 + 11 * DAY, "the clock passed it: it follows again");
});

Deno.test("a restart keeps the mark written within the last minute and the issuer's time", () => {
  const state = memory();
  const { mono, read } = monotonic();
  const local = new LicenseLocalState(state, { issuedAt: T0, monotonic: read });
  mono.now += 5 * DAY + 30_000;
  local.advance(T0 + 7 * DAY); // the clock is two days ahead of the time lived through
  assert.equal(local.highWater(), T0 + 5 * DAY + 30_000);
  const again = monotonic();
  const restarted = new LicenseLocalState(state, { issuedAt: T0, monotonic: again.read });
  assert.equal(restarted.highWater(), T0 + 5 * DAY + 30_000, "stored as this rule's form");
  again.mono.now += DAY;
  restarted.advance(T0 + 9 * DAY);
  assert.equal(restarted.highWater(), T0 + 6 * DAY + 30_000, "lived-through time goes on");
  const later = new LicenseLocalState(state, { issuedAt: T0 + 8 * DAY, monotonic: read });
  assert.equal(later.highWater(), T0 + 8 * DAY, "a later issuer time (a sync) wins");
  const none = new LicenseLocalState(memory(), { monotonic: read });
  none.advance(T0);
  assert.equal(none.highWater(), undefined, "no license, no mark: the clock alone sets nothing");
});

Deno.test("a mark an earlier build stored far ahead is capped at load and heals", () => {
  const ahead = String(T0 + 800 * DAY); // earlier builds stored the clock, as a bare number
  const state = memory({ [ConfigKey.LICENSE_CLOCK_HIGH_WATER]: ahead });
  const { mono, read } = monotonic();
  const local = new LicenseLocalState(state, { issuedAt: T0, monotonic: read });
  assert.equal(local.highWater(), T0 + LEGACY_MARK_LIMIT_MS);
  mono.now += 2 * LEGACY_MARK_LIMIT_MS;
  local.advance(T0 + 2 * LEGACY_MARK_LIMIT_MS);
  assert.equal(local.highWater(), T0 + 2 * LEGACY_MARK_LIMIT_MS);
  assert.equal(stored(state), v2(T0 + 2 * LEGACY_MARK_LIMIT_MS), "rewritten in this rule's form");

  const near = memory({ [ConfigKey.LICENSE_CLOCK_HIGH_WATER]: String(T0 + 3_600_000) });
  assert.equal(
    new LicenseLocalState(near, { issuedAt: T0, monotonic: read }).highWater(),
    T0 + 3_600_000,
    "within the limit it counts whole",
  );
  const unlicensed = memory({ [ConfigKey.LICENSE_CLOCK_HIGH_WATER]: ahead });
  assert.equal(
    new LicenseLocalState(unlicensed, { monotonic: read }).highWater(),
    undefined,
    "without an issuer time it does not count",
  );
  const ours = memory({ [ConfigKey.LICENSE_CLOCK_HIGH_WATER]: v2(T0 + 800 * DAY) });
  assert.equal(
    new LicenseLocalState(ours, { issuedAt: T0, monotonic: read }).highWater(),
    T0 + 800 * DAY,
    "a mark of this rule is lived-through time: kept whole",
  );
});

Deno.test("setHighWater() (the issuer's time) sets the mark, also lower, and restarts from it", () => {
  const state = memory();
  const { mono, read } = monotonic();
  const local = new LicenseLocalState(state, { issuedAt: T0, monotonic: read });
  mono.now += 10 * DAY;
  local.advance(T0 + 10 * DAY);
  local.setHighWater(T0 + 5 * DAY);
  assert.equal(local.highWater(), T0 + 5 * DAY);
  assert.equal(stored(state), v2(T0 + 5 * DAY));
  mono.now += DAY;
  local.advance(T0 + 20 * DAY);
  assert.equal(local.highWater(), T0 + 6 * DAY);
  const fresh = new LicenseLocalState(memory(), { monotonic: read });
  fresh.setHighWater(T0);
  assert.equal(fresh.highWater(), T0, "activation gives a first mark");
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
  for (const junk of ["x", "{", '{"v":3,"ms":5}', '{"v":2,"ms":-1}', "0"]) {
    const read = new LicenseLocalState(memory({ license_clock_high_water: junk }), {
      issuedAt: T0,
    });
    assert.equal(read.highWater(), T0, `junk ${junk} is no mark`);
  }
});
