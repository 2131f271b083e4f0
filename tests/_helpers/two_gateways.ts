/**
 * The set-up of most two-gateway tests: one filtered relay and two real gateways on it, started in
 * order (relay, A, B) and stopped in reverse by PID; a peer with `keepData` restarts on its data.
 */
import { GatewayPeer } from "./gateway_peer.ts";
import { NO_RELAY, type Relay, startRelay, type StartRelayOptions } from "./relay.ts";
import { makeTempDir, type TempDir } from "./temp.ts";

/** How one of the two gateways starts. */
export interface GatewaySpec {
  /** The gateway's profile name (its display name). */
  readonly name: string;
  /** Extra daemon flags, e.g. `--cors`. */
  readonly args?: readonly string[];
  /** Extra daemon environment, e.g. `EDGE_LOG_LEVEL`. */
  readonly env?: Record<string, string>;
  /** Keep the data directory outside the peer's own temp dir, so `restart()` finds it again. */
  readonly keepData?: boolean;
}

type Side = "a" | "b";

/** A filtered relay with gateways `a` and `b`; `await using` stops all three. */
export class TwoGateways implements AsyncDisposable {
  readonly #specs: Record<Side, GatewaySpec>;
  readonly #dataDirs: TempDir[] = [];
  readonly #dataDir: Partial<Record<Side, string>> = {};
  a!: GatewayPeer;
  b!: GatewayPeer;

  private constructor(readonly relay: Relay, a: GatewaySpec, b: GatewaySpec) {
    this.#specs = { a, b };
  }

  /**
   * Starts the relay (with the chatmail filter, and `relayOptions`), then A, then B; names
   * default to "A" and "B".
   */
  static async start(
    a: string | GatewaySpec = "A",
    b: string | GatewaySpec = "B",
    relayOptions: StartRelayOptions = {},
  ): Promise<TwoGateways> {
    const spec = (s: string | GatewaySpec) => typeof s === "string" ? { name: s } : s;
    const relay = await startRelay({ filter: true, ...relayOptions });
    const gws = new TwoGateways(relay, spec(a), spec(b));
    try {
      for (const side of ["a", "b"] as const) {
        if (gws.#specs[side].keepData) {
          const dir = await makeTempDir(`gw-${side.toUpperCase()}-data`);
          gws.#dataDirs.push(dir);
          gws.#dataDir[side] = `${dir.path}/data`;
        }
        gws[side] = await gws.#startPeer(side);
      }
      return gws;
    } catch (err) {
      await gws[Symbol.asyncDispose]();
      throw err;
    }
  }

  /** Starts `side` again on its kept data directory, after the test stopped or killed it. */
  async restart(side: Side): Promise<GatewayPeer> {
    if (this.#dataDir[side] === undefined) throw new Error(`gateway ${side} keeps no data`);
    this[side] = await this.#startPeer(side);
    return this[side];
  }

  #startPeer(side: Side): Promise<GatewayPeer> {
    const { name, args, env } = this.#specs[side];
    return GatewayPeer.start(name, this.relay, { dataDir: this.#dataDir[side], args, env });
  }

  /** Stops B, then A (each by its PID), removes kept data, then stops the relay. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.b?.stop();
      await this.a?.stop();
      for (const dir of this.#dataDirs) await dir.cleanup();
    } finally {
      await this.relay[Symbol.asyncDispose]();
    }
  }
}

/** A relay test run on two gateways (see {@link twoGatewaysTest}). */
export interface TwoGatewaysTest {
  readonly name: string;
  /** How A and B start (default "A" and "B"). */
  readonly gateways?: readonly [string | GatewaySpec, (string | GatewaySpec)?];
  /** Skips the test, besides when there is no relay. */
  readonly ignore?: boolean;
  /** How the relay starts besides its filter, e.g. a lower `messageSizeLimit`. */
  readonly relay?: StartRelayOptions;
  /** The test; the relay and both gateways are stopped after it, whatever it did. */
  fn(gws: TwoGateways): Promise<void>;
}

/**
 * A `Deno.test` on a fresh {@link TwoGateways}, skipped without a relay; resources and ops are
 * not sanitized, as in every relay test.
 */
export function twoGatewaysTest(t: TwoGatewaysTest): void {
  Deno.test({
    name: t.name,
    ignore: NO_RELAY || t.ignore === true,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const [a, b] = t.gateways ?? [];
      await using gws = await TwoGateways.start(a, b, t.relay);
      await t.fn(gws);
    },
  });
}
