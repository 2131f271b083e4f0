/** The mail loops' clocks: a monotonic one for waits, and a watch for jumps of the wall clock. */

/** Milliseconds since an arbitrary origin that never jumps; only differences mean something. */
export type MonotonicClock = () => number;

/** The process's monotonic clock (`performance.now()`). */
export const monotonicNow: MonotonicClock = () => performance.now();

/**
 * How far the wall clock may move against the monotonic one between two looks before it counts
 * as a jump: more than NTP's slewing or a timer's lateness, less than any offset that matters.
 */
export const CLOCK_JUMP_TOLERANCE_MS = 5_000;

/**
 * Notices jumps of the wall clock (set by hand, by NTP after a boot without a real-time clock,
 * or a suspend): between two looks, the wall clock should move as far as the monotonic one.
 */
export class ClockJumpWatch {
  #wall: number;
  #mono: number;

  constructor(
    private readonly wall: () => number,
    private readonly mono: MonotonicClock,
    private readonly toleranceMs = CLOCK_JUMP_TOLERANCE_MS,
  ) {
    this.#wall = wall();
    this.#mono = mono();
  }

  /** How far the wall clock jumped since the last look (ms, either sign), or 0 within tolerance. */
  jumped(): number {
    const wall = this.wall();
    const mono = this.mono();
    const drift = (wall - this.#wall) - (mono - this.#mono);
    this.#wall = wall;
    this.#mono = mono;
    return Math.abs(drift) > this.toleranceMs ? drift : 0;
  }
}
