/**
 * `Services` for RPC and HTTP tests: the real account core over an in-memory store (a real key,
 * made once per test module; the outbox is the store's; no network) with its inbox reception, a
 * real event bus, a settable connectivity level, a license source whose status the test chooses
 * and a counter of sender wake-ups. A test whose peers have fake keys passes a fake `renderer`
 * (the core's send steps, control mails and read receipts owed).
 */
import { type AccountCore, createAccountCore } from "../../src/account/core.ts";
import { parseConfig } from "../../src/config.ts";
import { blobDirOf } from "../../src/core/context.ts";
import type { SelfIdentity } from "../../src/core/contacts/identity.ts";
import type { OutgoingRenderer } from "../../src/core/send/outgoing.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { readPrivateKey } from "../../src/crypto/pgp.ts";
import { EventBus } from "../../src/events/bus.ts";
import type { Services } from "../../src/services.ts";
import { Store } from "../../src/store/mod.ts";
import { FakeLicense } from "../_helpers/fake_license.ts";
import { InboxReception } from "../../src/core/receive/inbox_reception.ts";

/** The account's address; the store is left unprovisioned until a test writes it. */
export const FAKE_ADDR = "me@relay.test";

/** The account's key, made once per test module (key generation is slow). */
export const FAKE_KEY = await generateAccountKey(FAKE_ADDR);
const PRIVATE_KEY = await readPrivateKey(FAKE_KEY.privateKey);

/** Options of `fakeServices`. */
export interface FakeServiceOptions {
  readonly license?: string | undefined;
  readonly level?: number;
  readonly dataDir?: string | undefined;
  readonly profile?: string;
  readonly bus?: EventBus;
  /** Replaces how the core makes mails (default: its own pipeline and composer). */
  readonly renderer?: OutgoingRenderer | undefined;
}

/** Services plus handles the tests poke at. */
export interface FakeServices extends Services {
  readonly bus: EventBus;
  readonly fakeLicense: FakeLicense;
  readonly connectivityLevel: { value: number };
  /** How often the core woke the sender (once per commit that queued mail). */
  readonly wakes: { count: number };
}

/** Builds the services; close the store with `services.store.close()` when done. */
export function fakeServices(options: FakeServiceOptions = {}): FakeServices {
  const env: Record<string, string> = {
    EDGE_DATA_DIR: options.dataDir ?? "/nonexistent/edge-test",
    EDGE_PROFILE: options.profile ?? "Test Gateway",
  };
  const config = parseConfig([], (name) => env[name]);
  const bus = options.bus ?? new EventBus();
  const fakeLicense = new FakeLicense(options.license);
  const connectivityLevel = { value: options.level ?? 4000 };
  const wakes = { count: 0 };
  const store = Store.open(":memory:");
  const self: SelfIdentity = {
    addr: FAKE_ADDR,
    name: config.profile ?? "",
    fingerprint: FAKE_KEY.fingerprint,
    publicKey: FAKE_KEY.publicKey,
    privateKey: PRIVATE_KEY,
  };
  const core: AccountCore = createAccountCore({
    store,
    events: bus,
    blobDir: blobDirOf(config.dataDir),
    self,
    license: fakeLicense,
    wakeSender: () => void wakes.count++,
    ...(options.renderer === undefined ? {} : { renderer: options.renderer }),
  });
  return {
    config,
    store,
    events: bus,
    bus,
    connectivity: { level: () => connectivityLevel.value },
    license: fakeLicense,
    fakeLicense,
    connectivityLevel,
    startedAt: Date.now() - 5000,
    core,
    quarantine: new InboxReception(core.ctx, core.receiver),
    wakes,
  };
}
