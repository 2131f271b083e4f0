/**
 * Fake `Services` for RPC and HTTP tests: an in-memory store, a real event bus, a settable
 * connectivity level and a license source whose status the test chooses.
 */
import { parseConfig } from "../../src/config.ts";
import { EventBus } from "../../src/events/bus.ts";
import type { LicenseSource, Services } from "../../src/services.ts";
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
}

/** Builds fake services; close the store with `services.store.close()` when done. */
export function fakeServices(options: FakeServiceOptions = {}): FakeServices {
  const env: Record<string, string> = {
    EDGE_DATA_DIR: options.dataDir ?? "/nonexistent/edge-test",
    EDGE_PROFILE: options.profile ?? "Test Gateway",
  };
  const bus = options.bus ?? new EventBus();
  const fakeLicense = new FakeLicense(options.license);
  const connectivityLevel = { value: options.level ?? 4000 };
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
  };
}
