/**
 * What the license check keeps in the account database: the clock high-water mark (a time this
 * gateway really lived through; `clock_tampered` when the clock falls behind it) and the
 * deactivations done here.
 *
 * The mark is never raised by the wall clock alone, so a clock that once ran ahead leaves nothing
 * behind. It starts from the issuer's signed time (the installed copy's `iat`: activation or last
 * sync) or the stored mark, whichever is later, and moves to `min(clock, anchor + monotonic time
 * elapsed since start)`: no further than the clock shows (a clock set back catches up with the
 * mark by itself) nor than the gateway has really run.
 */
import { describeError, diskFullError } from "../errors.ts";
import { logger } from "../log.ts";
import { ConfigKey, type ConfigStore } from "../store/config_store.ts";

const log = logger("license");

/** How often (at most) the high-water mark is written while it moves forward. */
const HIGH_WATER_WRITE_MS = 60_000;

/**
 * How far past the installed license's issue time a mark stored by an earlier build still counts.
 * Those builds raised the mark to any clock reading, also one far ahead; one day keeps the mark
 * of a gateway synced daily (as docs/licenses.md suggests) and drops what a clock ahead added beyond it.
 */
export const LEGACY_MARK_LIMIT_MS = 86_400_000;

/** The stored form of a mark kept by this rule (earlier builds stored a bare number of ms). */
interface StoredMark {
  readonly v: 2;
  readonly ms: number;
}

/** A mark as read back, and whether an earlier build wrote it. */
interface ReadMark {
  readonly ms: number;
  readonly legacy: boolean;
}

/** A time known to have passed and the monotonic clock's reading at that moment. */
interface Anchor {
  readonly at: number;
  readonly mono: number;
}

/** Clocks and facts the mark starts from. */
export interface LicenseLocalStateOptions {
  /** The installed license's issue time (the issuer's clock at activation or last sync), Unix ms. */
  readonly issuedAt?: number | undefined;
  /** A monotonic clock in ms (default `performance.now`); only differences are used. */
  readonly monotonic?: (() => number) | undefined;
}

const positive = (ms: unknown): ms is number =>
  typeof ms === "number" && Number.isFinite(ms) && ms > 0;

/** The stored mark, or undefined for none or junk. */
function parseMark(raw: string | undefined): ReadMark | undefined {
  if (raw === undefined) return undefined;
  if (raw.startsWith("{")) {
    try {
      const mark: Partial<StoredMark> = JSON.parse(raw);
      return mark.v === 2 && positive(mark.ms) ? { ms: mark.ms, legacy: false } : undefined;
    } catch {
      return undefined;
    }
  }
  const ms = Number(raw);
  return positive(ms) ? { ms, legacy: true } : undefined;
}

/** The part of a stored mark that counts: all of one of this rule, one of an earlier build capped. */
function keptMark(stored: ReadMark | undefined, issuedAt: number | undefined): number | undefined {
  if (stored === undefined || !stored.legacy) return stored?.ms;
  return issuedAt === undefined ? undefined : Math.min(stored.ms, issuedAt + LEGACY_MARK_LIMIT_MS);
}

/** The license's rows of the `config` table, cached in memory. */
export class LicenseLocalState {
  readonly #state: Pick<ConfigStore, "get" | "set">;
  readonly #monotonic: () => number;
  #highWater: number | undefined;
  #anchor: Anchor | undefined;
  /** The mark last written (or read back in this rule's form). */
  #written: number | undefined;

  /**
   * Reads the stored mark and anchors the lived-through time on it or on `issuedAt`, whichever
   * is later. A mark of an earlier build counts up to `issuedAt + LEGACY_MARK_LIMIT_MS`, and not
   * at all without a verified license (activation sets a new one).
   */
  constructor(state: Pick<ConfigStore, "get" | "set">, options: LicenseLocalStateOptions = {}) {
    this.#state = state;
    this.#monotonic = options.monotonic ?? (() => performance.now());
    const stored = parseMark(state.get(ConfigKey.LICENSE_CLOCK_HIGH_WATER));
    if (stored !== undefined && !stored.legacy) this.#written = stored.ms;
    const times = [keptMark(stored, options.issuedAt), options.issuedAt].filter(positive);
    const start = times.length > 0 ? Math.max(...times) : undefined;
    if (start !== undefined) this.#restart(start);
  }

  /** The latest time recorded, Unix ms. */
  highWater(): number | undefined {
    return this.#highWater;
  }

  /**
   * Moves the mark to `min(now, lived-through time)` when that is later (written at most once a
   * minute). Without an anchor (no stored mark, no license) there is nothing to move.
   */
  advance(now: number): void {
    if (this.#anchor === undefined) return;
    const lived = this.#anchor.at + Math.max(0, this.#monotonic() - this.#anchor.mono);
    const reached = Math.min(now, lived);
    if (this.#highWater !== undefined && reached <= this.#highWater) return;
    this.#highWater = reached;
    if (this.#written === undefined || reached >= this.#written + HIGH_WATER_WRITE_MS) {
      this.#write(reached);
    }
  }

  /**
   * Sets the mark and the lived-through anchor, also lower: only with the issuer's signed time
   * (activation and sync).
   */
  setHighWater(ms: number): void {
    this.#restart(ms);
    this.#write(ms);
  }

  #restart(ms: number): void {
    this.#highWater = ms;
    this.#anchor = { at: ms, mono: this.#monotonic() };
  }

  #write(ms: number): void {
    const mark: StoredMark = { v: 2, ms };
    try {
      this.#state.set(ConfigKey.LICENSE_CLOCK_HIGH_WATER, JSON.stringify(mark));
      this.#written = ms;
    } catch (err) {
      // A full disk is said once, by the store; the mark is written again at the next advance.
      if (diskFullError(err) !== undefined) return;
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
