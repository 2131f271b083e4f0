/**
 * What the license check keeps in the account database: the clock high-water mark (the latest
 * time seen; `clock_tampered` when the clock falls behind it) and the deactivations done here.
 */
import { describeError } from "../errors.ts";
import { logger } from "../log.ts";
import { ConfigKey, type ConfigStore } from "../store/config_store.ts";

const log = logger("license");

/** How often (at most) the high-water mark is written while the clock moves forward. */
const HIGH_WATER_WRITE_MS = 60_000;

/** The license's rows of the `config` table, cached in memory. */
export class LicenseLocalState {
  readonly #state: Pick<ConfigStore, "get" | "set">;
  #highWater: number | undefined;

  constructor(state: Pick<ConfigStore, "get" | "set">) {
    this.#state = state;
    const stored = Number(state.get(ConfigKey.LICENSE_CLOCK_HIGH_WATER));
    this.#highWater = Number.isFinite(stored) && stored > 0 ? stored : undefined;
  }

  /** The latest time recorded, Unix ms. */
  highWater(): number | undefined {
    return this.#highWater;
  }

  /** Records `now` if it is later than the mark (written at most once a minute). */
  advance(now: number): void {
    if (this.#highWater === undefined || now >= this.#highWater + HIGH_WATER_WRITE_MS) {
      this.setHighWater(now);
    }
  }

  /** Sets the mark, also lower (only with the issuer's signed time: activation and sync). */
  setHighWater(ms: number): void {
    this.#highWater = ms;
    try {
      this.#state.set(ConfigKey.LICENSE_CLOCK_HIGH_WATER, String(ms));
    } catch (err) {
      log.warn("cannot record the clock high-water mark", { error: describeError(err) });
    }
  }

  /** License id → issue time (ms) of the latest copy deactivated here. */
  #deactivations(): Record<string, number> {
    try {
      const map = JSON.parse(this.#state.get(ConfigKey.LICENSE_DEACTIVATED) ?? "{}");
      return typeof map === "object" && map !== null && !Array.isArray(map) ? map : {};
    } catch {
      return {};
    }
  }

  /** The issue time of the latest copy of license `id` deactivated here, if any. */
  deactivatedIssuedAt(id: string): number | undefined {
    const at = this.#deactivations()[id];
    return typeof at === "number" ? at : undefined;
  }

  /** Records that copies of `id` issued up to `issuedAt` were deactivated here. */
  markDeactivated(id: string, issuedAt: number): void {
    const map = this.#deactivations();
    map[id] = Math.max(map[id] ?? 0, issuedAt);
    this.#state.set(ConfigKey.LICENSE_DEACTIVATED, JSON.stringify(map));
  }

  /** Forgets a deactivation of `id` (the device holds a seat again). */
  clearDeactivated(id: string): void {
    const map = this.#deactivations();
    if (!(id in map)) return;
    delete map[id];
    this.#state.set(ConfigKey.LICENSE_DEACTIVATED, JSON.stringify(map));
  }
}
