/**
 * Fake `Services` for RPC and HTTP tests: an in-memory store, a real event bus, a settable
 * connectivity level, a license source whose status the test chooses, a counter of sender
 * wake-ups, and an `outgoing` and `secureJoin` that fail until a test passes real ones.
 */
import { parseConfig } from "../../src/config.ts";
import type { OutgoingRenderer } from "../../src/core/outgoing.ts";
import { EventBus } from "../../src/events/bus.ts";
import type { LicenseSource } from "../../src/license/manager.ts";
import type { SecureJoinService } from "../../src/securejoin/mod.ts";
import type { Services } from "../../src/services.ts";
import { Store } from "../../src/store/mod.ts";

/** A license source with a fixed status; `active` makes gated methods callable. */
export class FakeLicense implements LicenseSource {
  constructor(public current: string = "no_license") {}
  status(): string {
    return this.current;
  }
  isActive(): boolean {
    return this.current === "active";
  }
}

/** Options of `fakeServices`. */
export interface FakeServiceOptions {
  readonly license?: string;
  readonly level?: number;
  readonly dataDir?: string;
  readonly profile?: string;
  readonly bus?: EventBus;
}

/** Services plus handles the tests poke at. */
export interface FakeServices extends Services {
  readonly bus: EventBus;
  readonly fakeLicense: FakeLicense;
  readonly connectivityLevel: { value: number };
  /** How often `wakeSender` was called (once per commit that queued mail). */
  readonly wakes: { count: number };
}

function unavailable(what: string): never {
  throw new Error(`${what} is not part of this test's fake services`);
}

/** An `OutgoingRenderer` that fails: tests that send pass their own. */
export const NO_OUTGOING: OutgoingRenderer = {
  chat: { admit: () => unavailable("sending"), render: () => unavailable("rendering") },
  oweReadReceipts: () => unavailable("read receipts"),
  renderControl: () => unavailable("rendering"),
};

/** A `SecureJoinService` that fails: tests that join pass a real one. */
export const NO_SECUREJOIN: SecureJoinService = {
  createInvite: () => unavailable("SecureJoin"),
  join: () => unavailable("SecureJoin"),
};

/** Builds fake services; close the store with `services.store.close()` when done. */
export function fakeServices(options: FakeServiceOptions = {}): FakeServices {
  const env: Record<string, string> = {
    EDGE_DATA_DIR: options.dataDir ?? "/nonexistent/edge-test",
    EDGE_PROFILE: options.profile ?? "Test Gateway",
  };
  const bus = options.bus ?? new EventBus();
  const fakeLicense = new FakeLicense(options.license);
  const connectivityLevel = { value: options.level ?? 4000 };
  const wakes = { count: 0 };
  return {
    config: parseConfig([], (name) => env[name]),
    store: Store.open(":memory:"),
    events: bus,
    bus,
    connectivity: { level: () => connectivityLevel.value },
    license: fakeLicense,
    fakeLicense,
    connectivityLevel,
    startedAt: Date.now() - 5000,
    outgoing: NO_OUTGOING,
    secureJoin: NO_SECUREJOIN,
    wakeSender: () => void wakes.count++,
    quarantine: { retryQuarantined: () => unavailable("reception") },
    wakes,
  };
}
