/**
 * Two or more real accounts in memory for pipeline tests: each has a store, a real OpenPGP key,
 * the account core built as the daemon builds it (`createAccountCore`) and an outbox that is a
 * plain list, so a test hands mails from one account's outbox to another's reception pipeline.
 */
import { type AccountCore, createAccountCore } from "../../src/account/core.ts";
import { loadIdentity } from "../../src/core/contacts/identity.ts";
import type { RenderedMail } from "../../src/core/chats/messages.ts";
import type { ReceiveOutcome } from "../../src/core/receive/pipeline.ts";
import type { DirectEndpoint, TransferOptions } from "../../src/core/transfer/mod.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import type { LicenseSource } from "../../src/license/manager.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { FakeLicense } from "../_helpers/fake_license.ts";
import { RecordingSink } from "./_messaging.ts";

/** A license that lets every gated step through. */
export const ACTIVE_LICENSE: LicenseSource = new FakeLicense("active");

/** One in-memory account. */
export interface TestAccount extends AccountCore {
  readonly addr: string;
  readonly store: Store;
  readonly sink: RecordingSink;
  /** Mails this account queued, oldest first (not yet handed on). */
  readonly outbox: RenderedMail[];
}

/**
 * Creates an account `addr` named `name` with a fresh key (blobs under `blobDir`); receipts are
 * collected for `receiptWindowMs` (tests call `receipts.flush()` to send them at once); `now` is
 * its clock in Unix ms (default `Date.now`); `license` gates sharing protected files (default: active);
 * `transferOptions` shorten or bound relay-part transfers.
 */
export async function testAccount(
  addr: string,
  name: string,
  blobDir = "/nonexistent/blobs",
  receiptWindowMs = 0,
  now?: () => number,
  license: LicenseSource = ACTIVE_LICENSE,
  transferOptions?: Partial<TransferOptions>,
  p2p?: DirectEndpoint,
): Promise<TestAccount> {
  const store = Store.open(":memory:");
  store.config.set(ConfigKey.ADDR, addr);
  store.config.set(ConfigKey.DISPLAY_NAME, name);
  store.keys.add(await generateAccountKey(addr));
  const sink = new RecordingSink();
  const outbox: RenderedMail[] = [];
  const core = createAccountCore({
    store,
    events: sink,
    blobDir,
    ...(now === undefined ? {} : { now }),
    self: await loadIdentity(store),
    license,
    receiptWindowMs,
    queue: (m) => outbox.push(m),
    transferOptions,
    p2p,
  });
  return { ...core, addr, store, sink, outbox };
}

/** The bytes of a queued mail: its row's raw, or its spool file for a large one. */
export async function mailBytes(
  from: TestAccount,
  m: { readonly raw: Uint8Array; readonly spool?: string | undefined },
): Promise<Uint8Array> {
  return m.spool ? await Deno.readFile(from.ctx.spool.path(m.spool)) : m.raw;
}

/** Hands every mail `from` queued (so far) to `to`'s pipeline; returns the outcomes. */
export async function deliverAll(from: TestAccount, to: TestAccount): Promise<ReceiveOutcome[]> {
  const out: ReceiveOutcome[] = [];
  for (const mail of from.outbox.splice(0)) {
    out.push(await to.receiver.receive(await mailBytes(from, mail)));
  }
  return out;
}

/**
 * Hands every mail `from` queued (its outbox table and list) to each of `to` that is among the
 * mail's envelope recipients, emptying both; returns the outbox table's rows.
 */
export async function deliver(from: TestAccount, ...to: TestAccount[]) {
  const rows = from.store.outbox.due(Date.now() + 10_000_000);
  for (const row of rows) {
    for (const acc of to) {
      if (row.recipients.includes(acc.addr)) {
        await acc.receiver.receive(await mailBytes(from, row));
      }
    }
    from.store.outbox.remove(row.id);
  }
  for (const mail of from.outbox.splice(0)) {
    for (const acc of to) {
      if (mail.recipients.includes(acc.addr)) {
        await acc.receiver.receive(await mailBytes(from, mail));
      }
    }
  }
  return rows;
}

/** Makes each account know the other's key (as after a SecureJoin), returns the contact ids. */
export function introduce(a: TestAccount, b: TestAccount): { bOnA: number; aOnB: number } {
  const add = (on: TestAccount, peer: TestAccount) =>
    on.store.contacts.insert({
      addr: peer.addr,
      authName: peer.self.name,
      fingerprint: peer.self.fingerprint,
      publicKey: peer.self.publicKey,
    });
  return { bOnA: add(a, b), aOnB: add(b, a) };
}

/** Lets timers (the receipt batcher's 0 ms window) run. */
export function tick(ms = 5): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
