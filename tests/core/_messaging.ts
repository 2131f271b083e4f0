/**
 * Fixtures for the messaging domain tests: a store, a recording event sink, a pinned clock,
 * peers with fake keys, and a fake renderer.
 */
import { type CoreContext, createCoreContext } from "../../src/core/context.ts";
import { Contacts } from "../../src/core/contacts/contacts.ts";
import { type AttachableFile, openAttachableFile } from "../../src/core/file_access.ts";
import type { RenderedMail, RenderFn, SendSteps } from "../../src/core/chats/messages.ts";
import type { EventSink, GatewayEvent } from "../../src/events/types.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";

/** Keeps every published event. */
export class RecordingSink implements EventSink {
  readonly events: GatewayEvent[] = [];
  /** Called on each publish (after it is recorded), e.g. to look at the database then. */
  onPublish?: (event: GatewayEvent) => void;
  publish(event: GatewayEvent): void {
    this.events.push(event);
    this.onPublish?.(event);
  }
  /** Returns the events so far and forgets them. */
  take(): GatewayEvent[] {
    return this.events.splice(0);
  }
}

/** Fixed clock: 2026-01-02 03:04:05 UTC. */
export const NOW_MS = Date.UTC(2026, 0, 2, 3, 4, 5);
export const NOW_S = NOW_MS / 1000;

/** A domain test bench. */
export interface Bench {
  readonly store: Store;
  readonly sink: RecordingSink;
  readonly ctx: CoreContext;
}

/** Opens a bench on `path` (default in memory) with the account configured as me@relay.test. */
export function bench(blobDir = "/nonexistent/blobs", path = ":memory:"): Bench {
  const store = Store.open(path);
  store.config.set(ConfigKey.ADDR, "me@relay.test");
  store.config.set(ConfigKey.DISPLAY_NAME, "Gateway");
  store.keys.add({
    fingerprint: "F".repeat(40),
    privateKey: "(test)",
    publicKey: new Uint8Array([9]),
  });
  const sink = new RecordingSink();
  return {
    store,
    sink,
    ctx: createCoreContext({ store, events: sink, blobDir, now: () => NOW_MS }),
  };
}

/** A 40-digit fingerprint made of one repeated hex digit. */
export const fpr = (digit: string) => digit.repeat(40).toUpperCase();

/** Adds a key-contact and returns its id (events are left in the sink). */
export function addPeer(b: Bench, addr: string, digit: string, name = ""): number {
  return new Contacts(b.ctx).upsertPeerFromKey({
    addr,
    name,
    fingerprint: fpr(digit),
    publicKey: new TextEncoder().encode(`key ${digit}`),
  }).id;
}

/** A renderer that records its calls and returns a fixed mail (`mid` counts up). */
export function fakeRender(calls: Parameters<RenderFn>[] = []): RenderFn {
  let n = 0;
  return (message, chat, recipients) => {
    calls.push([message, chat, recipients]);
    const mail: RenderedMail = {
      raw: new TextEncoder().encode(`mail ${++n}`),
      rfc724Mid: `out${n}@relay.test`,
      envelopeFrom: "me@relay.test",
      recipients: recipients.map((r) => r.addr),
      subject: "Message from Gateway",
    };
    return Promise.resolve(mail);
  };
}

/** Send steps that admit every draft and render with {@link fakeRender}. */
export function fakeSend(calls: Parameters<RenderFn>[] = []): SendSteps {
  return { admit: () => Promise.resolve(), render: fakeRender(calls) };
}

/** Opens `path` under the file rules, its own directory being the files directory (close it). */
export function attach(path: string): Promise<AttachableFile> {
  const filesDir = path.slice(0, path.lastIndexOf("/"));
  return openAttachableFile(path, { filesDir, dataDir: "/nonexistent/data" }, {
    method: "test",
    verb: "sent",
  });
}
